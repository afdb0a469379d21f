"""The question-to-answer pipeline as one generator, shared by sync and asyncio.

`answer_flow` yields each normalized plan to execute and receives its
ExecutionResult (or has the executor's QdslError thrown in); it returns the
`AnswerResult`. `qdsl.api` drives it with `execute` or `await aexecute`, so
both twins run exactly the same steps and failure semantics:

- route not internal -> PolicyError; gate phrase -> `gated` (no planning);
- a plan that does not parse or normalize -> the typed error is raised (never
  a free answer); `unknown` -> `clarify`; no template -> `not_covered`;
- an empty result -> `clarify` (clarify_on_empty) or a verified "not found";
  nothing to explain or diagnose from -> `insufficient_evidence`;
- the verifier's outcome decides: re-execute (same plan), re-plan with the
  verdict as feedback (clarified plan), `insufficient_evidence`, bounded;
  whatever still fails is `refused`, audited, and carries no answer data.

The records live in `qdsl.answer_types`, the stages in `qdsl.stages` (one
`Run` per request); this module strings the stages together.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from qdsl.abstentions import gated
from qdsl.answer_types import AnswerResult, Flow, PlanCall, Settings, Status, plan_context
from qdsl.audit import Audit, plan_shape
from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.errors import NotCoveredError, PlanError, PolicyError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.normalize import NormalizedPlan, PlanContext
from qdsl.dsl.question import Reading
from qdsl.executor.result import ExecutionResult
from qdsl.gate import check_route, gate
from qdsl.planner import PlanDraft
from qdsl.stages import LLM_UNAVAILABLE, Run, attempt_event, feedback_for
from qdsl.superlatives import tied, widened, widened_bound
from qdsl.verifier import Language, Outcome, Verdict
from qdsl.verifier.checks.question import question_covered

__all__ = [
    "LLM_UNAVAILABLE",
    "AnswerResult",
    "Flow",
    "PlanCall",
    "Settings",
    "Status",
    "Step",
    "answer_flow",
    "attempt_event",
    "feedback_for",
    "plan_context",
    "plan_step",
    "step",
    "verified_answer",
]

# What one plan's tries end in: an answer, or the last verdict to act on.
Tried = AnswerResult | tuple[Plan, Verdict, ExecutionResult]


def verified_answer(
    plan: Plan,
    result: ExecutionResult,
    *,
    tenant_id: str,
    settings: Settings,
    audit: Audit,
    language: Language = "en",
) -> AnswerResult:
    """Render and verify one executed plan, without retries (`qdsl run`).

    The plan came from the caller, not from a question, so the only outcomes
    are answered, clarify, insufficient_evidence and refused.
    """
    run = Run("", tenant_id, settings, audit)
    run.lang = language
    audit.begin(tenant_id, None)
    audit.event("plan", **plan_shape(plan), planner="caller")
    if not kind_of(plan.query_type).executable:
        return run.clarify(plan)
    empty = run.on_empty(plan, result)
    if empty is not None:
        return empty
    answer, verdict = run.judge(plan, result)
    if verdict.ok:
        return run.answered(plan, result, answer, verdict)
    if verdict.retryable and verdict.outcome is Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE:
        return run.insufficient(plan, verdict, result.execution_id)
    return run.refused(plan, verdict, result.execution_id)


def _only_question_gaps(verdict: Verdict, reading: Reading | None) -> bool:
    """Every error is question_covered's asking for a clarified plan; or the
    question itself was not understood (its reading has problems, which no plan
    can carry: "what is the total …") and every error asks for a clarified plan,
    the contract check's plan of another query type included."""
    errors = verdict.errors()
    clarified = [i for i in errors if i.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN]
    if not errors or len(clarified) != len(errors):
        return False
    covered = [i for i in errors if i.check == question_covered.__name__]
    return len(covered) == len(errors) or bool(covered and reading is not None and reading.problems)


def _wants_replan(verdict: Verdict) -> bool:
    return verdict.retryable and verdict.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN


def answer_flow(question: str, tenant_id: str, s: Settings, audit: Audit) -> Flow:
    """The pipeline for one question; every way it ends leaves one audit summary."""
    audit.begin(tenant_id, question)
    try:
        return (yield from _answer_flow(question, tenant_id, s, audit))
    except QdslError as exc:
        audit.failed(exc)
        raise


def _answer_flow(question: str, tenant_id: str, s: Settings, audit: Audit) -> Flow:
    run = Run(question, tenant_id, s, audit)
    early = _admit(run, question)
    if early is not None:
        return early
    pctx = plan_context(tenant_id, s.context)
    run.read(pctx)
    feedback: str | None = None
    for replan in range(s.replans + 1):
        tried = yield from _plan_and_try(run, pctx, feedback)
        if isinstance(tried, AnswerResult):
            return tried
        plan, verdict, result = tried
        if _wants_replan(verdict) and replan < s.replans:
            feedback = feedback_for(verdict, plan)
            audit.event("retry", retry="clarified_plan", attempt=replan + 1)
            continue
        return _conclude(run, plan, verdict, result)
    raise AssertionError("unreachable: the replan loop always returns")


def _admit(run: Run, question: str) -> AnswerResult | None:
    """The route and the gate: a refusal raised, a gated phrase answered, else None."""
    s, audit = run.s, run.audit
    audit.event("request", route_mode=s.route_mode, language=run.lang, question_chars=len(question))
    try:
        check_route(s.route_mode)
    except PolicyError as exc:
        audit.event("route", status="refused", error_code=exc.code)
        raise
    decision = gate(question, s.lexicon)
    audit.event("gate", status="gated" if decision.gated else "passed", kind=decision.kind)
    if decision.gated and decision.kind is not None:
        kind = decision.kind.value
        return run.finish(status="gated", gate_kind=kind, text=gated(run.lang, kind), data={})
    return None


def _plan_and_try(run: Run, pctx: PlanContext, feedback: str | None) -> Generator[Any, Any, Tried]:
    """One plan, planned and tried: an answer, or the verdict that refused it."""
    try:
        normalized = yield from run.make_plan(pctx, feedback)
    except NotCoveredError as exc:
        return run.not_covered(None, exc)
    except PlanError as exc:
        return run.unplanned(exc)
    if not kind_of(normalized.plan.query_type).executable:
        return run.clarify(normalized.plan)
    return (yield from _tries(run, normalized))


def _tries(run: Run, normalized: NormalizedPlan) -> Generator[Any, Any, Tried]:
    """Execute and judge the same plan, again while the verdict asks for that."""
    asked, audit = normalized.plan, run.audit
    spec = run.s.catalog.entities.get(asked.entity_type)
    # a one-row superlative runs with room for the rows that tie with its first
    wide = widened(asked, spec)
    # bound once, by the normalizer: the executor compiles it as it is
    target = (normalized.bound or asked) if wide is None else widened_bound(normalized.bound, wide)
    plan = asked
    verdict: Verdict | None = None
    result: ExecutionResult | None = None
    for attempt in range(run.s.same_plan_tries):
        try:
            result = yield target
            assert isinstance(result, ExecutionResult)
        except NotCoveredError as exc:
            audit.event("execute", status="not_covered", error_code=exc.code)
            return run.not_covered(asked, exc)
        except QdslError as exc:
            audit.event("execute", status="error", error_code=exc.code)
            raise
        run.executed(result, attempt + 1)
        if wide is not None:
            plan, result = tied(asked, spec, result)
        empty = run.on_empty(plan, result) or run.on_several(plan, result)
        if empty is not None:
            return empty
        answer, verdict = run.judge(plan, result)
        if verdict.ok:
            return run.answered(plan, result, answer, verdict)
        if not verdict.retryable or verdict.outcome is not Outcome.RETRY_WITH_SAME_PLAN:
            break
        audit.event("retry", retry="same_plan", attempt=attempt + 1)
    assert verdict is not None and result is not None
    return plan, verdict, result


def _conclude(run: Run, plan: Plan, verdict: Verdict, result: ExecutionResult) -> AnswerResult:
    """A verdict with no try left: ask, say the evidence is short, or refuse."""
    if _wants_replan(verdict):
        if _only_question_gaps(verdict, run.reading):
            # Out of replans with the question not covered: ask, naming the gap.
            return run.clarify(plan, verdict)
    elif verdict.retryable and verdict.outcome is Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE:
        return run.insufficient(plan, verdict, result.execution_id)
    return run.refused(plan, verdict, result.execution_id)


# What the flow asks its driver for next (a plan to execute, a planner to call),
# or its answer.
Step = tuple[BoundPlan | Plan | PlanCall | None, AnswerResult | None]


def plan_step(flow: Flow, run: Callable[[], PlanDraft]) -> Step:
    """Call the planner the flow asked for and hand the flow its draft (or error)."""
    try:
        draft = run()
    except QdslError as exc:
        return step(flow, exc=exc)
    return step(flow, result=draft)


def step(
    flow: Flow,
    *,
    result: ExecutionResult | PlanDraft | None = None,
    exc: QdslError | None = None,
) -> Step:
    """Hand the flow what it asked for (a result, a draft, or the error instead)."""
    try:
        if exc is not None:
            return flow.throw(exc), None
        assert result is not None
        return flow.send(result), None
    except StopIteration as stop:
        return None, stop.value
