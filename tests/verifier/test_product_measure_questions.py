"""A declared product measure (the shop's revenue = quantity × unit_price per order
line) asked in zh and en, end to end on SQLite and PostgreSQL: the rule planner
answers "Top 5 products by revenue" as a breakdown of the order lines per product,
the five highest, and "What is the revenue?" as its aggregate, both checked against
the rows multiplied here; the careless plans an LLM could write for the ranking
(the lines counted, the quantity summed, another measure, the grouping dropped or
changed, another number of groups) are never answered, while the careful one is."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import Rows
from fixed_planner import FixedPlanner

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog

TENANTS = ("nordwind", "sunrise")
_TOP_EN = "Top 5 products by revenue"
_TOP_ZH = "销售额最高的 5 个商品"
_CAREFUL = "breakdown order_line group by product measure revenue limit 5"


def _revenue(rows: Rows, tenant: str) -> dict[str, float]:
    """Each product's revenue: its lines' quantity × unit_price, added up."""
    out: dict[str, float] = defaultdict(float)
    for line in rows["order_lines"]:
        if line["tenant_id"] == tenant:
            out[str(line["product_id"])] += float(line["quantity"]) * float(line["unit_price"])
    return dict(out)


def _groups(res: Any) -> dict[str, Any]:
    return {str(g["keys"][0]): g["value"] for g in res.data["groups"]}


@pytest.mark.parametrize("tenant", TENANTS)
@pytest.mark.parametrize("question", [_TOP_EN, _TOP_ZH])
def test_the_shop_ranks_its_products_by_revenue(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, question: str, tenant: str
) -> None:
    engine, rows = shop
    res = plan_and_answer(
        question, tenant, engine=engine, options=AnswerOptions(catalog=shop_catalog)
    )
    assert res.status == "answered", (res.status, res.text)
    assert res.answer_contract.value == "breakdown_table"
    assert (res.data["function"], res.data["measure"]) == ("sum", "revenue")
    every = _revenue(rows, tenant)
    top = dict(sorted(every.items(), key=lambda kv: -kv[1])[:5])
    assert len(every) > 5  # the cut is real: "other" holds the rest
    assert _groups(res) == pytest.approx(top)
    assert res.data["total"] == pytest.approx(sum(every.values()))
    assert res.verdict.ok and "question_covered" in res.verdict.checks_run


@pytest.mark.parametrize(
    ("question", "words"), [("What is the revenue?", "revenue"), ("销售额是多少", "销售额")]
)
def test_the_shop_answers_its_revenue(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, question: str, words: str
) -> None:
    engine, rows = shop
    options = AnswerOptions(catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert res.data["value"] == pytest.approx(sum(_revenue(rows, "nordwind").values()))
    assert words in res.text, res.text
    assert res.verdict.ok


@pytest.mark.parametrize("question", [_TOP_EN, _TOP_ZH])
def test_the_careful_plan_for_the_revenue_ranking_is_answered(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, question: str
) -> None:
    # what the refusals below are measured against: the same question, the right plan
    engine, _rows = shop
    options = AnswerOptions(planner=FixedPlanner(_CAREFUL), catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert res.verdict is not None and res.verdict.ok


@pytest.mark.parametrize(
    "plan",
    [
        "breakdown order_line group by product limit 5",  # the lines counted
        "breakdown order_line group by product measure units_sold limit 5",  # quantity summed
        "breakdown order_line group by product measure sum(quantity) limit 5",
        "breakdown order_line group by product measure avg(unit_price) limit 5",
        "aggregate order_line measure revenue",  # the grouping dropped
        "breakdown order_line group by order measure revenue limit 5",  # another grouping
        "breakdown order_line group by product measure revenue limit 3",  # another number
        "breakdown order_line group by product measure revenue",  # no number
        "list product limit 5",
    ],
)
@pytest.mark.parametrize("question", [_TOP_EN, _TOP_ZH])
def test_a_careless_plan_for_the_revenue_ranking_is_never_answered(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, question: str, plan: str
) -> None:
    engine, _rows = shop
    options = AnswerOptions(planner=FixedPlanner(plan), catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=engine, options=options)
    assert res.status in {"clarify", "refused"}, (question, plan, res.status, res.text)
