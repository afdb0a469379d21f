"""Mutation tests on real answers: execute example questions on the demo data,
take the correct rendered answer, mutate it one way, and require the named
check to catch it. (The hand-built twins are in test_verify_mutations.py.)"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import Engine

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import AnswerContract, Plan, RetrievalPolicy
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute
from qdsl.facts.demo import DEMO_NOW
from qdsl.phrases import detect_language
from qdsl.planner import RulePlanner, intended_query_type
from qdsl.render import render
from qdsl.verifier import Answer, Verdict, VerifyContext, verify

CATALOG = demo_catalog()


@dataclass
class Case:
    question: str
    tenant: str
    plan: Plan
    result: ExecutionResult
    answer: Answer

    def verify(
        self,
        answer: Answer | None = None,
        *,
        plan: Plan | None = None,
        result: ExecutionResult | None = None,
        route: str = "internal",
    ) -> Verdict:
        ctx = VerifyContext(
            tenant_id=self.tenant,
            route_mode=route,
            now=DEMO_NOW,
            catalog=CATALOG,
            expected_query_type=intended_query_type(self.question, CATALOG),
        )
        return verify(plan or self.plan, result or self.result, answer or self.answer, context=ctx)


def run_case(engine: Engine, question: str, tenant: str = "t1", plan: Plan | None = None) -> Case:
    if plan is None:
        draft = RulePlanner().plan(question, catalog=CATALOG)
        plan = normalize(load_plan(draft.text), CATALOG, PlanContext(tenant_id=tenant)).plan
    result = execute(plan, CATALOG, engine, tenant, now=DEMO_NOW)
    answer = render(plan, result, language=detect_language(question), catalog=CATALOG)
    case = Case(question, tenant, plan, result, answer)
    assert case.verify().ok, case.verify().issues
    return case


A_SHARE_ZH = "帮我看看系统里面有没有 A 股项目"
A_SHARE_EN = "Are there any A-share projects?"


@pytest.mark.parametrize("question", [A_SHARE_ZH, A_SHARE_EN])
def test_total_count_swapped_in(engine: Engine, question: str) -> None:
    case = run_case(engine, question)
    total = case.result.baseline_total
    assert total is not None and total != len(case.result.rows)
    text = (
        f"有 {total} 个项目（A股）。"
        if case.answer.language == "zh"
        else (f"We have {total} A-share projects.")
    )
    mutated = case.answer.model_copy(
        update={"text": text + " [" + case.answer.cited_evidence[0] + "]"}
    )
    assert "no_total_count_substitution" in case.verify(mutated).failed


def test_filtered_count_swapped_for_total(engine: Engine) -> None:
    case = run_case(engine, "有多少个港股项目")
    total = case.result.baseline_total
    assert total is not None and case.answer.data["count"] != total
    mutated = case.answer.model_copy(
        update={"data": {"count": total}, "text": f"共有 {total} 个项目（港股）。"}
    )
    assert "no_total_count_substitution" in case.verify(mutated).failed


@pytest.mark.parametrize(
    ("question", "drop"),
    [
        (A_SHARE_ZH, ("A股", "沪深A股", "A-share", "China A-share")),
        ("有多少个进行中的项目", ("进行中", "active")),
        ("How many paused projects do we have?", ("paused", "on hold")),
        ("Which tasks are assigned to project 64?", ("64",)),
    ],
)
def test_condition_dropped(engine: Engine, question: str, drop: tuple[str, ...]) -> None:
    case = run_case(engine, question)
    text = case.answer.text
    for row in case.result.rows:  # labels may happen to contain the value too
        if row.label:
            text = text.replace(row.label, "")
    for spelling in sorted(drop, key=len, reverse=True):
        text = text.replace(spelling, "")
    mutated = case.answer.model_copy(update={"text": text})
    assert case.verify(mutated).failed == ("covers_conditions",)


def test_fact_from_another_run_cited(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_ZH)
    other = run_case(engine, "当前系统架构是什么")
    foreign = next(e.id for e in other.result.evidence if e.kind == "fact")
    assert foreign not in case.result.evidence_by_id()
    mutated = case.answer.model_copy(
        update={"cited_evidence": (*case.answer.cited_evidence, foreign)}
    )
    assert case.verify(mutated).failed == ("evidence_backed",)


def test_result_evidence_from_another_execution(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_ZH)
    again = run_case(engine, A_SHARE_ZH)
    assert again.result.execution_id != case.result.execution_id
    mixed = case.result.model_copy(update={"evidence": again.result.evidence})
    assert case.verify(result=mixed).failed == ("evidence_backed",)


def test_stale_fact_cited_under_require_fresh_fact(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_ZH)
    stale = [
        e.id
        for e in case.result.evidence
        if e.kind == "fact"
        and e.valid_until is not None
        and e.valid_until.year == 2026
        and e.valid_until.month < 11
    ]
    assert stale
    cited = case.answer.model_copy(
        update={"cited_evidence": tuple(dict.fromkeys((*case.answer.cited_evidence, *stale)))}
    )
    assert case.verify(cited).ok  # stale facts are fine when freshness is not required
    policy = RetrievalPolicy(require_fresh_fact=True, freshness_days=30)
    fresh_plan = case.plan.model_copy(update={"retrieval_policy": policy})
    verdict = case.verify(cited, plan=fresh_plan)
    assert verdict.failed == ("fresh_evidence",)
    assert verdict.outcome.value == "explicit_insufficient_evidence"
    # Executed under the freshness requirement, the stale facts are not read at all.
    fresh = run_case(engine, A_SHARE_ZH, plan=fresh_plan)
    assert not set(stale) & set(fresh.result.evidence_by_id())


def test_other_tenants_fact(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_ZH, "t1")
    theirs = run_case(engine, A_SHARE_ZH, "t3")
    foreign = next(e for e in theirs.result.evidence if e.kind == "fact")
    cited = case.answer.model_copy(
        update={"cited_evidence": (*case.answer.cited_evidence, foreign.id)}
    )
    assert "evidence_backed" in case.verify(cited).failed
    leaked = foreign.model_copy(update={"execution_id": case.result.execution_id})
    result = case.result.model_copy(update={"evidence": (*case.result.evidence, leaked)})
    verdict = case.verify(cited, result=result)
    assert verdict.failed == ("tenant_consistent",)
    assert not verdict.retryable


@pytest.mark.parametrize(
    ("question", "wrong"),
    [
        (A_SHARE_ZH, AnswerContract.COUNT_SCALAR),
        ("现在有多少个项目", AnswerContract.YES_NO_WITH_EVIDENCE),
        ("项目 64 现在什么状态", AnswerContract.ENTITY_LIST),
    ],
)
def test_contract_mislabelled(engine: Engine, question: str, wrong: AnswerContract) -> None:
    case = run_case(engine, question)
    mutated = case.answer.model_copy(update={"contract": wrong})
    failed = case.verify(mutated).failed
    assert failed[0] == "contract_matches_query_type" or "contract_matches_query_type" in failed


def test_list_over_the_limit(engine: Engine) -> None:
    case = run_case(engine, "系统里有哪些项目", "t3")
    assert case.answer.data["truncated"] is True
    items = case.answer.data["items"]
    padded = {**case.answer.data, "items": items + items[:1]}
    mutated = case.answer.model_copy(update={"data": padded})
    assert "within_limit" in case.verify(mutated).failed
    silent = case.answer.model_copy(update={"data": {**case.answer.data, "truncated": False}})
    assert case.verify(silent).failed == ("within_limit",)


def test_external_route(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_EN)
    assert case.verify(route="external").failed == ("route_contract_internal",)


def test_yes_for_an_empty_result(engine: Engine) -> None:
    case = run_case(engine, A_SHARE_ZH, "t2")
    assert case.answer.data["exists"] is False
    lie = case.answer.model_copy(update={"data": {"exists": True, "matches": []}})
    # A bare "yes" also cites nothing, which evidence_backed names too.
    assert set(case.verify(lie).failed) == {"consistent_with_result", "evidence_backed"}
