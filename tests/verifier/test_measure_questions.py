"""Measure questions end to end, on SQLite and PostgreSQL: the rule planner reads the
function a question asks (total, 平均, the highest … asked as a value) and answers
it where the catalog lets the field be aggregated so; careless plans an LLM could
write for them (another function, another field, a count, a list, a filter left
out) are never answered. Who holds the highest value stays a record question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fixed_planner import FixedPlanner
from sqlalchemy import Engine, text

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog


def _budgets(engine: Engine, tenant: str, status: str | None) -> list[float]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT tenant_id, status, budget FROM projects")).all()
    return [float(b) for t, s, b in rows if t == tenant and status in (None, s) and b is not None]


_ORACLE: dict[str, Callable[[list[float]], float]] = {
    "sum": sum,
    "avg": lambda v: sum(v) / len(v),
    "max": max,
    "min": min,
}


@pytest.mark.parametrize(
    ("question", "function", "status", "words"),
    [
        ("What is the average budget of active projects?", "avg", "active", "Average budget"),
        ("活跃项目的平均预算是多少", "avg", "active", "平均预算"),
        ("What is the total budget of paused projects?", "sum", "paused", "Total budget"),
        ("活跃项目的预算合计是多少", "sum", "active", "预算合计"),
        ("活跃项目的总预算是多少", "sum", "active", "预算合计"),
        ("What is the highest budget?", "max", None, "Maximum budget"),
        ("最高预算是多少", "max", None, "最高预算"),
        ("活跃项目的最低预算是多少", "min", "active", "最低预算"),
        ("What is the lowest budget of active projects?", "min", "active", "Minimum budget"),
    ],
)
def test_the_rule_planner_answers_the_function_asked(
    engine: Engine, question: str, function: str, status: str | None, words: str
) -> None:
    res = plan_and_answer(question, "t1", engine=engine)
    assert res.status == "answered", (res.status, res.text)
    data: dict[str, Any] = dict(res.data)
    values = _budgets(engine, "t1", status)
    assert data["function"] == function and data["measure"] == "budget"
    assert data["value"] == pytest.approx(_ORACLE[function](values))
    assert data["rows"]["count"] == len(values)
    assert [f["value"] for f in data["filters"]] == ([status] if status else [])
    assert res.verdict.ok and "question_covered" in res.verdict.checks_run
    assert words in res.text and f"{len(values)}" in res.text, res.text


@pytest.mark.parametrize(
    "question",
    ["Which project has the highest budget?", "哪个项目预算最高", "Who has the highest budget?"],
)
def test_who_holds_the_highest_value_stays_a_record(engine: Engine, question: str) -> None:
    res = plan_and_answer(question, "t1", engine=engine)
    assert res.answer_contract.value != "aggregate_with_basis", res.text


@pytest.mark.parametrize(
    "question",
    [
        "项目的平均标题是多少",  # no field averages
        "有没有总预算超过100万的项目",  # asks for projects
        "总预算超过100万的项目有几个",  # asks for a count
    ],
)
def test_what_no_plan_states_is_asked_about(engine: Engine, question: str) -> None:
    res = plan_and_answer(question, "t1", engine=engine)
    assert res.status in {"clarify", "refused"}, (res.status, res.text)


_AVG = "What is the average budget of active projects?"
_MAX = "最高预算是多少"
_SUM = "活跃项目的预算合计是多少"


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (_AVG, 'aggregate project where status = "active" measure sum(budget)'),  # avg as sum
        (_AVG, 'aggregate project where status = "active" select budget'),  # legacy sum
        (_AVG, 'aggregate project where status = "active" measure max(budget)'),
        (_AVG, "aggregate project measure avg(budget)"),  # its filter left out
        (_AVG, 'aggregate project where status = "active" measure count()'),  # rows counted
        (_AVG, 'count project where status = "active"'),  # answered as a count
        (_MAX, "aggregate project measure sum(budget)"),  # max as sum
        (_MAX, "list project order by budget desc limit 1"),  # the holder, not the value
        (_SUM, 'aggregate project where status = "active" measure avg(budget)'),
        (_SUM, 'list project where status = "active" select budget'),  # as a list
        (_SUM, 'aggregate project where status = "paused" measure sum(budget)'),  # other filter
    ],
)
def test_a_careless_plan_for_a_measure_is_never_answered(
    engine: Engine, question: str, plan: str
) -> None:
    res = plan_and_answer(
        question, "t1", engine=engine, options=AnswerOptions(planner=FixedPlanner(plan))
    )
    assert res.status in {"clarify", "refused"}, (question, plan, res.status, res.text)


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (_AVG, 'aggregate project where status = "active" measure avg(budget)'),
        (_MAX, "aggregate project measure max(budget)"),
        (_SUM, 'aggregate project where status = "active" select budget'),  # legacy form
    ],
)
def test_the_right_plan_from_a_planner_is_answered(
    engine: Engine, question: str, plan: str
) -> None:
    res = plan_and_answer(
        question, "t1", engine=engine, options=AnswerOptions(planner=FixedPlanner(plan))
    )
    assert res.status == "answered", (res.status, res.text)


# The online shop (tests/deployments/shop/): order lines have two number fields, and
# payments declare measures, so another field or a declared ratio can be mistaken.
_SHOP_CARELESS = [
    ("What is the highest unit price?", "aggregate order_line measure max(quantity)"),
    ("What is the highest unit price?", "aggregate order_line measure avg(unit_price)"),
    ("客单价是多少", "aggregate payment measure average_payment"),  # another declared one
    ("客单价是多少", "aggregate payment measure avg(amount)"),
    ("What is the average payment amount?", "aggregate payment measure total_paid"),
]


@pytest.fixture
def shop_engine(shop_url: str) -> Any:
    from qdsl.facts.db import make_engine

    engine = make_engine(shop_url)
    yield engine
    engine.dispose()


@pytest.mark.parametrize(("question", "plan"), _SHOP_CARELESS)
def test_a_measure_over_another_field_or_measure_is_never_answered(
    shop_engine: Engine, shop_catalog: Catalog, question: str, plan: str
) -> None:
    options = AnswerOptions(planner=FixedPlanner(plan), catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=shop_engine, options=options)
    assert res.status in {"clarify", "refused"}, (question, plan, res.status, res.text)


@pytest.mark.parametrize(
    ("question", "function", "measure"),
    [
        ("What is the highest unit price?", "max", "unit_price"),
        ("客单价是多少", "ratio", "average_order_value"),
        ("What is the average payment amount?", "avg", "average_payment"),
    ],
)
def test_the_shop_answers_its_measures(
    shop_engine: Engine, shop_catalog: Catalog, question: str, function: str, measure: str
) -> None:
    options = AnswerOptions(catalog=shop_catalog)
    res = plan_and_answer(question, "nordwind", engine=shop_engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert (res.data["function"], res.data["measure"]) == (function, measure)
    assert res.verdict.ok
