"""Sum questions end to end, on SQLite and PostgreSQL: the rule planner answers them
where the catalog lets the field be summed, and careless plans an LLM could write
for them (a count, a list, the unfiltered total, another filter, a sum for an
average) are never answered."""

from __future__ import annotations

from typing import Any

import pytest
from fixed_planner import FixedPlanner
from sqlalchemy import Engine, text

from qdsl.api import AnswerOptions, plan_and_answer


def _sum(engine: Engine, tenant: str, status: str | None) -> float:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT tenant_id, status, budget FROM projects")).all()
    return float(
        sum(b for t, s, b in rows if t == tenant and status in (None, s) and b is not None)
    )


@pytest.mark.parametrize(
    ("question", "tenant", "status"),
    [
        ("sum of budget of active projects", "t1", "active"),
        ("活跃项目的预算总和是多少", "t1", "active"),
        ("what is the sum of budget of projects", "t2", None),
        ("项目的预算总和", "t1", None),
    ],
)
def test_the_rule_planner_answers_a_sum(
    engine: Engine, question: str, tenant: str, status: str | None
) -> None:
    res = plan_and_answer(question, tenant, engine=engine)
    assert res.status == "answered", (res.status, res.text)
    assert res.answer_contract.value == "aggregate_with_basis"
    data: dict[str, Any] = dict(res.data)
    assert data["value"] == _sum(engine, tenant, status)
    assert data["function"] == "sum" and data["measure"] == "budget"
    assert [f["value"] for f in data["filters"]] == ([status] if status else [])
    assert res.verdict.ok and "consistent_with_result" in res.verdict.checks_run
    ids = data["rows"]["ids"]
    assert len(ids) == data["rows"]["count"]  # every summed row, under the default limit
    assert f"[project:{ids[0]}]" in res.text


@pytest.mark.parametrize(
    "question",
    ["sum of projects", "项目总和", "what is the sum of titles of projects"],
)
def test_a_sum_with_no_summable_field_is_asked_about(engine: Engine, question: str) -> None:
    res = plan_and_answer(question, "t1", engine=engine)
    assert res.status == "clarify", (res.status, res.text)


_SUM_ACTIVE = "sum of budget of active projects"


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (_SUM_ACTIVE, 'count project where status = "active"'),  # a sum answered as a count
        (_SUM_ACTIVE, 'list project where status = "active" select budget'),  # as a list
        (_SUM_ACTIVE, "aggregate project select budget"),  # the unfiltered total
        (_SUM_ACTIVE, 'aggregate project where status = "paused" select budget'),  # other filter
        (
            "average budget of active projects",
            'aggregate project where status = "active" select budget',
        ),  # an average answered as a sum
        ("活跃项目的预算总和是多少", "aggregate project select budget"),
        ("活跃项目的预算总和是多少", 'count project where status = "active"'),
    ],
)
def test_a_careless_plan_for_a_sum_is_never_answered(
    engine: Engine, question: str, plan: str
) -> None:
    res = plan_and_answer(
        question, "t1", engine=engine, options=AnswerOptions(planner=FixedPlanner(plan))
    )
    assert res.status != "answered", (question, plan, res.text)
    assert res.status in {"clarify", "refused"}, res.status


def test_the_right_plan_from_a_planner_is_answered(engine: Engine) -> None:
    plan = 'aggregate project where status = "active" select budget'
    res = plan_and_answer(
        _SUM_ACTIVE, "t1", engine=engine, options=AnswerOptions(planner=FixedPlanner(plan))
    )
    assert res.status == "answered" and res.data["value"] == _sum(engine, "t1", "active")
