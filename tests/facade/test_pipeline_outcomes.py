"""plan_and_answer failure semantics: not_covered, clarify/not-found on empty,
verifier outcomes driving bounded retries, insufficient evidence, refusal."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.audit import MemorySink
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PolicyError
from qdsl.dsl.normalize import PlanContext
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import PlanDraft
from qdsl.verifier import Issue, Outcome, Subject


@dataclass
class Fixed:
    """A planner that always writes the same plan text."""

    text: str
    name: str = "fixed"

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        return PlanDraft(text=self.text, planner=self.name)


def test_no_template_is_not_covered(sqlite_engine: Engine) -> None:
    res = plan_and_answer(
        "explain project 64",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=Fixed("explain project"), now=DEMO_NOW),
    )
    assert res.status == "not_covered"
    assert res.verdict is None and set(res.data) == {"clarification"}


def test_empty_result_clarifies_when_the_plan_says_so(sqlite_engine: Engine) -> None:
    planner = Fixed('list project where title contains "zzzz-nothing" on_empty clarify')
    res = plan_and_answer(
        "哪些项目叫 zzzz",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=planner, now=DEMO_NOW),
    )
    assert res.status == "clarify"
    assert res.plan is not None and res.plan.clarify_on_empty
    assert set(res.data) == {"clarification"}


def test_empty_result_says_not_found_by_default(sqlite_engine: Engine) -> None:
    res = plan_and_answer(
        "项目 999 现在什么状态", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    assert res.status == "answered"
    assert res.data == {"entity": None}
    assert "999" in res.text and res.verdict is not None and res.verdict.ok
    res = plan_and_answer(
        "有没有美股项目", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    assert res.status == "answered" and res.data == {"exists": False, "matches": []}


def test_same_plan_retry_is_bounded_and_can_recover(sqlite_engine: Engine) -> None:
    calls: list[str] = []

    def flaky(s: Subject) -> list[Issue]:
        calls.append(s.result.execution_id)
        if len(calls) == 1:
            return [Issue(check="flaky", message="first time unlucky")]
        return []

    sink = MemorySink()
    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(now=DEMO_NOW, checks=(flaky,), audit_sink=sink),
    )
    assert res.status == "answered"
    assert len(calls) == 2 and calls[0] != calls[1]  # re-executed: a new execution id
    assert [e["stage"] for e in sink.events].count("execute") == 2

    def always(s: Subject) -> list[Issue]:
        calls.append("x")
        return [Issue(check="always", message="never good enough")]

    calls.clear()
    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(now=DEMO_NOW, checks=(always,)),
    )
    assert res.status == "refused" and len(calls) == 2
    assert res.data == {} and res.evidence == ()
    assert res.verdict is not None and res.verdict.failed == ("always",)


def test_explicit_insufficient_evidence(sqlite_engine: Engine) -> None:
    def thin(s: Subject) -> list[Issue]:
        return [Issue(check="thin", message="x", outcome=Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE)]

    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(now=DEMO_NOW, checks=(thin,)),
    )
    assert res.status == "insufficient_evidence"
    assert res.data == {} and res.verdict is not None and res.verdict.failed == ("thin",)


def test_non_retryable_failure_is_refused_at_once(sqlite_engine: Engine) -> None:
    calls: list[int] = []

    def leak(s: Subject) -> list[Issue]:
        calls.append(1)
        return [Issue(check="leak", message="x", retryable=False)]

    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(now=DEMO_NOW, checks=(leak,)),
    )
    assert res.status == "refused" and calls == [1]


def test_context_tenant_must_be_the_caller(sqlite_engine: Engine) -> None:
    with pytest.raises(PolicyError) as info:
        plan_and_answer(
            "有没有 A 股项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(context=PlanContext(tenant_id="t2")),
        )
    assert info.value.code == "policy/tenant_scope_mismatch"


def test_plan_tenant_is_never_taken_from_the_plan(sqlite_engine: Engine) -> None:
    with pytest.raises(PolicyError) as info:
        plan_and_answer(
            "有没有 A 股项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(
                planner=Fixed('existence project where market_theme ~= "A股" tenant t2')
            ),
        )
    assert info.value.code == "policy/tenant_scope_mismatch"


def test_default_engine_is_the_embedded_demo() -> None:
    res = plan_and_answer("帮我看看系统里面有没有 A 股项目", "t1")
    assert res.status == "answered" and res.data["exists"] is True
    assert res.evidence and all(e.kind in ("fact", "object") for e in res.evidence)
    assert any(e.kind == "fact" for e in res.evidence)
