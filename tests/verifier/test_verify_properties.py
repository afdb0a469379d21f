"""Properties: the renderer's answers always pass over arbitrary results (no false
alarms from ids, labels or values full of digits), and stating the unfiltered
total instead of the match count is always caught."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verifier_cases import A_SHARE, context, fact, plan, rendered

from qdsl.dsl.ir import Filter, Operator, QueryType
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.verifier import verify

EXISTS = plan(QueryType.EXISTENCE, A_SHARE)
LIST = plan(QueryType.LIST, (Filter(field="status", operator=Operator.EQUALS, value="paused"),))

labels = st.text(
    alphabet=st.sampled_from(list("abcXYZ 项目研究平台0123456789-")), min_size=1, max_size=16
)


@st.composite
def results(draw: st.DrawFn, qt: QueryType) -> ExecutionResult:
    n = draw(st.integers(min_value=0, max_value=6))
    ids = draw(st.lists(st.integers(1, 999).map(str), min_size=n, max_size=n, unique=True))
    rows = tuple(
        ResultRow(
            entity_type="project",
            entity_id=i,
            tenant_id="t1",
            label=draw(labels),
            values={"id": i, "status": "paused", "budget": draw(st.integers(0, 10**6))},
            evidence_ids=(f"fact:{k}",),
        )
        for k, i in enumerate(ids, start=1)
    )
    evidence = tuple(fact(k, i) for k, i in enumerate(ids, start=1))
    baseline = draw(st.integers(min_value=n, max_value=n + 500))
    return ExecutionResult(
        execution_id="exec-1",
        tenant_id="t1",
        query_type=qt,
        entity_type="project",
        template="t",
        plan_hash="h",
        rows=rows,
        count=n if qt is QueryType.LIST else None,
        baseline_total=baseline,
        evidence=evidence,
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=results(QueryType.EXISTENCE), language=st.sampled_from(["zh", "en"]))
def test_rendered_existence_answers_pass(result: ExecutionResult, language: str) -> None:
    answer = rendered(EXISTS, result, language)
    verdict = verify(EXISTS, result, answer, context=context())
    assert verdict.ok, (answer.text, verdict.issues)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=results(QueryType.LIST), language=st.sampled_from(["zh", "en"]))
def test_rendered_list_answers_pass(result: ExecutionResult, language: str) -> None:
    answer = rendered(LIST, result, language)
    verdict = verify(LIST, result, answer, context=context())
    assert verdict.ok, (answer.text, verdict.issues)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=results(QueryType.EXISTENCE), language=st.sampled_from(["zh", "en"]))
def test_stating_the_total_is_always_caught(result: ExecutionResult, language: str) -> None:
    total = result.baseline_total
    assert total is not None
    if total == len(result.rows):
        return  # every project matches: the total is the true answer
    answer = rendered(EXISTS, result, language)
    claim = (
        f"有 {total} 个项目（A股）。"
        if language == "zh"
        else f"There are {total} A-share projects."
    )
    verdict = verify(EXISTS, result, answer.model_copy(update={"text": claim}), context=context())
    assert "no_total_count_substitution" in verdict.failed
