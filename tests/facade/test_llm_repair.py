"""Repairs that know the question: typed errors with their position, the
question_covered feedback, and policy errors that are never repaired away."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.errors import PolicyError
from qdsl.dsl.plan.load import load_plan
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, RulePlanner

TICKETS_NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)


class Script:
    """A fake completion: replies in order (the last repeats) and records every prompt."""

    def __init__(self, replies: Iterable[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies[min(len(self.prompts), len(self.replies)) - 1]


@pytest.fixture(params=["demo", "tickets"])
def case(
    request: pytest.FixtureRequest,
    tickets_catalog: Catalog,
    sqlite_engine: Engine,
    tickets_sqlite_url: str,
) -> tuple[Catalog, str, datetime, Engine, str]:
    from qdsl.facts.db import make_engine

    if request.param == "demo":
        return demo_catalog(), "现在有多少个进行中的项目", DEMO_NOW, sqlite_engine, "t1"
    eng = make_engine(tickets_sqlite_url)
    request.addfinalizer(eng.dispose)
    return tickets_catalog, "How many urgent tickets are there?", TICKETS_NOW, eng, "acme"


def _ask(case: tuple[Catalog, str, datetime, Engine, str], planner: LLMPlanner) -> object:
    catalog, question, now, eng, tenant = case
    return plan_and_answer(
        question,
        tenant,
        engine=eng,
        options=AnswerOptions(planner=planner, catalog=catalog, now=now),
    )


def test_a_dropped_condition_is_repaired_with_question_covered_feedback(
    case: tuple[Catalog, str, datetime, Engine, str],
) -> None:
    catalog, question = case[0], case[1]
    good = RulePlanner().plan(question, catalog=catalog).text
    plan = load_plan(good)
    assert plan.filters  # the question states a condition
    dropped = f"{plan.query_type.value} {plan.entity_type}"
    script = Script([dropped, good])
    res = _ask(case, LLMPlanner(script))
    assert res.status == "answered"  # type: ignore[attr-defined]
    assert res.verdict.ok  # type: ignore[attr-defined]
    assert len(script.prompts) == 2
    replan = script.prompts[1]
    condition = plan.filters[0]
    # The verifier's sentence: which words were not applied, which filter carries them.
    assert ("question_covered" in replan and "not applied" in replan) or "未被计划应用" in replan
    assert condition.field in replan
    assert f"refused plan: {dropped}" in replan or dropped in replan


def test_a_condition_dropped_every_time_is_never_answered(
    case: tuple[Catalog, str, datetime, Engine, str],
) -> None:
    catalog, question = case[0], case[1]
    plan = load_plan(RulePlanner().plan(question, catalog=catalog).text)
    script = Script([f"{plan.query_type.value} {plan.entity_type}"])
    res = _ask(case, LLMPlanner(script))
    # Bounded: one replan, then an explicit status, never an unverified answer.
    assert res.status in ("clarify", "refused")  # type: ignore[attr-defined]
    assert not res.verdict.ok  # type: ignore[attr-defined]
    assert len(script.prompts) == 2


def test_a_wrong_field_is_repaired_with_code_position_and_hint(
    case: tuple[Catalog, str, datetime, Engine, str],
) -> None:
    catalog, question = case[0], case[1]
    good = RulePlanner().plan(question, catalog=catalog).text
    field = load_plan(good).filters[0].field
    typo = good.replace(f"where {field} ", f"where {field}x ")
    script = Script([typo, good])
    res = _ask(case, LLMPlanner(script))
    assert res.status == "answered"  # type: ignore[attr-defined]
    first, second = res.attempts  # type: ignore[attr-defined]
    assert first.error_code and first.error_code.startswith("validation/") and second.ok
    repair = script.prompts[1]
    assert first.error_code in repair and f"{field}x" in repair
    assert "line " in repair and "column " in repair  # where in the plan the fault is
    assert f"`{field}`" in repair or field in repair.split("hint:")[-1]


def test_another_tenant_is_the_policy_error_at_once(
    case: tuple[Catalog, str, datetime, Engine, str],
) -> None:
    catalog, question = case[0], case[1]
    good = RulePlanner().plan(question, catalog=catalog).text
    script = Script([good.rstrip("\n") + "\ntenant someone_else\n", good])
    with pytest.raises(PolicyError) as info:
        _ask(case, LLMPlanner(script, max_attempts=3))
    assert info.value.code == "policy/tenant_scope_mismatch"
    assert info.value.exit_code == 6
    # Never retried into compliance: the model was asked once.
    assert len(script.prompts) == 1
    assert info.value.details["attempts"][0]["error_code"] == "policy/tenant_scope_mismatch"


def test_a_sensitive_field_is_not_repaired_either() -> None:
    catalog = demo_catalog()
    sensitive = next(
        f for e in catalog.entities.values() for f, s in e.fields.items() if s.sensitive
    )
    entity = next(n for n, e in catalog.entities.items() if sensitive in e.fields)
    script = Script([f'existence {entity} where {sensitive} = "x"', f"count {entity}"])
    with pytest.raises(PolicyError) as info:
        LLMPlanner(script).plan("any question", catalog=catalog)
    assert info.value.code.startswith("policy/") and len(script.prompts) == 1
