"""A measure per group asked in zh and en ("每个状态的项目预算合计", "What is the total paid
per payment method?"), end to end on SQLite and PostgreSQL over two deployments (the
demo, the online shop): the rule planner answers it as a breakdown computing that
measure, checked against the rows; the careless plans an LLM could write for it
(groups counted, the grouping dropped or changed, another function, a filter left
out, a list) are never answered."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fixed_planner import FixedPlanner
from sqlalchemy import Engine, text

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.facts.db import make_engine

_FUNCTIONS: dict[str, Callable[[list[float]], float]] = {
    "sum": sum,
    "avg": lambda v: sum(v) / len(v),
}


def _per_status(engine: Engine, tenant: str, function: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    with engine.connect() as conn:
        for t, status, budget in conn.execute(
            text("SELECT tenant_id, status, budget FROM projects")
        ):
            if t == tenant and budget is not None:
                groups[status].append(float(budget))
    return {k: _FUNCTIONS[function](v) for k, v in groups.items()}


def _groups(res: Any) -> dict[Any, Any]:
    return {g["keys"][0]: g["value"] for g in res.data["groups"]}


@pytest.mark.parametrize(
    ("question", "function", "words"),
    [
        ("每个状态的项目预算合计", "sum", "预算合计"),
        ("各状态项目的平均预算是多少", "avg", "平均预算"),
        ("What is the total budget per status?", "sum", "Total budget"),
        ("What is the average budget by status?", "avg", "Average budget"),
    ],
)
def test_the_demo_answers_a_measure_per_group(
    engine: Engine, question: str, function: str, words: str
) -> None:
    res = plan_and_answer(question, "t1", engine=engine)
    assert res.status == "answered", (res.status, res.text)
    assert res.answer_contract.value == "breakdown_table"
    assert (res.data["function"], res.data["measure"]) == (function, "budget")
    want = _per_status(engine, "t1", function)
    assert _groups(res) == pytest.approx(want)
    assert res.verdict.ok and "question_covered" in res.verdict.checks_run
    assert words in res.text, res.text


_DEMO_SUM = "每个状态的项目预算合计"
_DEMO_AVG = "What is the average budget by status?"


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (_DEMO_SUM, "breakdown project group by status"),  # the groups counted
        (_DEMO_SUM, "aggregate project measure sum(budget)"),  # the grouping dropped
        (_DEMO_SUM, "breakdown project measure avg(budget) group by status"),  # avg for sum
        (_DEMO_SUM, "breakdown project measure max(budget) group by status"),
        (_DEMO_SUM, "list project select status, budget"),  # a list
        (_DEMO_AVG, "breakdown project measure sum(budget) group by status"),  # sum for avg
        (_DEMO_AVG, "breakdown project measure avg(budget) group by created_at month"),
        (_DEMO_AVG, 'aggregate project where status = "active" measure avg(budget)'),
    ],
)
def test_a_careless_plan_for_a_measure_per_group_is_never_answered(
    engine: Engine, question: str, plan: str
) -> None:
    res = plan_and_answer(
        question, "t1", engine=engine, options=AnswerOptions(planner=FixedPlanner(plan))
    )
    assert res.status in {"clarify", "refused"}, (question, plan, res.status, res.text)


@pytest.fixture
def shop_engine(shop_url: str) -> Iterator[Engine]:
    engine = make_engine(shop_url)
    yield engine
    engine.dispose()


def _payments(engine: Engine, tenant: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT tenant_id, method, amount, refunded FROM payments")
        ).mappings()
        return [dict(r) for r in rows if r["tenant_id"] == tenant]


@pytest.mark.parametrize(
    ("question", "function", "refunded"),
    [
        ("What is the total paid per payment method?", "sum", None),
        ("按支付方式统计支付总额", "sum", None),
        ("Average payment amount by method", "avg", None),
        ("各支付方式已退款的支付金额合计", "sum", True),
        ("What is the total amount of refunded payments per method?", "sum", True),
    ],
)
def test_the_shop_answers_a_measure_per_group(
    shop_engine: Engine, shop_catalog: Catalog, question: str, function: str, refunded: bool | None
) -> None:
    options = AnswerOptions(catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=shop_engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert res.data["function"] == function
    groups: dict[str, list[float]] = defaultdict(list)
    for r in _payments(shop_engine, "nordwind"):
        if refunded is None or bool(r["refunded"]) is refunded:
            groups[r["method"]].append(float(r["amount"]))
    want = {k: _FUNCTIONS[function](v) for k, v in groups.items()}
    assert _groups(res) == pytest.approx(want)
    assert res.verdict.ok


_SHOP_SUM = "What is the total amount of refunded payments per method?"


@pytest.mark.parametrize(
    "plan",
    [
        "breakdown payment measure sum(amount) group by method",  # its filter left out
        "breakdown payment where refunded = true group by method",  # counted
        "breakdown payment where refunded = true measure avg(amount) group by method",
        "breakdown payment where refunded = true measure sum(amount) group by paid_at month",
        "aggregate payment where refunded = true measure sum(amount)",
        "breakdown payment where refunded = true measure average_order_value group by method",
    ],
)
def test_a_careless_shop_plan_per_group_is_never_answered(
    shop_engine: Engine, shop_catalog: Catalog, plan: str
) -> None:
    options = AnswerOptions(planner=FixedPlanner(plan), catalog=shop_catalog)
    res = plan_and_answer(_SHOP_SUM, "nordwind", engine=shop_engine, options=options)
    assert res.status in {"clarify", "refused"}, (plan, res.status, res.text)
