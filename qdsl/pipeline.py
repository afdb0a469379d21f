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
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from qdsl.audit import Audit, plan_shape
from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import NotCoveredError, PlanError, PolicyError, QdslError
from qdsl.dsl.ir import AnswerContract, Plan, QueryType
from qdsl.dsl.kinds import EmptyResult, kind_of
from qdsl.dsl.linking import ValueSource
from qdsl.dsl.normalize import NormalizedPlan, PlanContext
from qdsl.dsl.plan_cache import compile_plan_object, compile_source
from qdsl.dsl.printer import to_text
from qdsl.dsl.question import Reading, problems_text, read_question
from qdsl.executor.result import Evidence, ExecutionResult
from qdsl.gate import GateLexicon, check_route, gate
from qdsl.phrases import detect_language
from qdsl.planner import Attempt, PlanDraft, Planner
from qdsl.planner.rule import RulePlanner, context_entities
from qdsl.render import clarification, gated, insufficient, not_covered, refused, render
from qdsl.verifier import Answer, Language, Outcome, Verdict, VerifyContext, verify
from qdsl.verifier.checks import Check
from qdsl.verifier.checks.question import question_covered

Status = Literal["answered", "gated", "clarify", "insufficient_evidence", "not_covered", "refused"]


@dataclass(frozen=True)
class AnswerResult:
    status: Status
    trace_id: str
    language: Language
    query_type: QueryType | None = None
    answer_contract: AnswerContract | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    plan: Plan | None = None
    verdict: Verdict | None = None
    gate_kind: str | None = None
    planner: str | None = None
    attempts: tuple[Attempt, ...] = ()
    warnings: tuple[str, ...] = ()
    execution_id: str | None = None
    # Why there is no answer when a retryable failure (the LLM API down) ended it.
    error: QdslError | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `ask` / `run` envelope data (docs/python-api.md): `answer` is the contract's data."""
        return {
            "status": self.status,
            "query_type": self.query_type.value if self.query_type else None,
            "answer_contract": self.answer_contract.value if self.answer_contract else None,
            "text": self.text,
            "answer": self.data,
            "evidence": [e.model_dump(mode="json") for e in self.evidence],
            "plan": self.plan.to_json_dict() if self.plan is not None else None,
            "verdict": self.verdict.model_dump(mode="json") if self.verdict else None,
            "trace_id": self.trace_id,
            "language": self.language,
            "gate_kind": self.gate_kind,
            "execution_id": self.execution_id,
        }


@dataclass(frozen=True)
class Settings:
    catalog: Catalog
    planner: Planner
    now: datetime
    route_mode: str = "internal"
    context: PlanContext | None = None
    lexicon: GateLexicon | None = None
    checks: tuple[Check, ...] | None = None
    same_plan_tries: int = 2
    replans: int = 1
    # Where the asking tenant's linkable values come from (None: no value linking).
    values: ValueSource | None = None


@dataclass(frozen=True)
class PlanCall:
    """The flow asks its driver for a plan: the sync driver calls the planner, the
    asyncio driver awaits its `aplan` or runs `plan` in a worker thread."""

    planner: Planner
    question: str
    catalog: Catalog
    context: PlanContext
    feedback: str | None

    def run(self) -> PlanDraft:
        return self.planner.plan(
            self.question, catalog=self.catalog, context=self.context, feedback=self.feedback
        )

    async def arun(self) -> PlanDraft:
        aplan = getattr(self.planner, "aplan", None)
        if aplan is not None and inspect.iscoroutinefunction(aplan):
            draft = await aplan(
                self.question, catalog=self.catalog, context=self.context, feedback=self.feedback
            )
            assert isinstance(draft, PlanDraft)
            return draft
        return await asyncio.to_thread(self.run)


# Yields plans to execute (sent their ExecutionResult) and PlanCalls (sent a PlanDraft).
Flow = Generator[BoundPlan | Plan | PlanCall, Any, AnswerResult]


def plan_context(tenant_id: str, context: PlanContext | None) -> PlanContext:
    if context is None:
        return PlanContext(tenant_id=tenant_id)
    if context.tenant_id is not None and context.tenant_id != tenant_id:
        raise PolicyError(
            "tenant_scope_mismatch",
            "the context names another tenant than the caller",
            hint="pass the caller's tenant only once, as tenant_id",
        )
    return PlanContext(
        tenant_id=tenant_id,
        project_id=context.project_id,
        thread_anchor=context.thread_anchor,
        referenced_objects=context.referenced_objects,
    )


LLM_UNAVAILABLE = "validation/llm_unavailable"


def attempt_event(a: Attempt) -> dict[str, Any]:
    """One planner attempt as the audit records it: number, outcome, error, cost."""
    return {"number": a.number, "error_code": a.error_code, **a.cost()}


def feedback_for(verdict: Verdict, plan: Plan | None = None) -> str:
    """The verdict's errors, and the refused plan so a planner can amend it."""
    text = "; ".join(f"{i.check}: {i.message}" for i in verdict.errors())
    if plan is not None:
        # A plan the text form cannot print: the errors alone.
        with contextlib.suppress(QdslError):
            text += f"\nrefused plan: {to_text(plan)}"
    return text


class _Run:
    """One request's state; the methods are the stages."""

    def __init__(self, question: str, tenant_id: str, s: Settings, audit: Audit) -> None:
        self.question, self.tenant_id, self.s, self.audit = question, tenant_id, s, audit
        self.lang: Language = detect_language(question)
        self.started = time.perf_counter()
        self.attempts: list[Attempt] = []
        self.planner_name: str | None = None
        self.warnings: tuple[str, ...] = ()
        self.reading: Reading | None = None

    def read(self, pctx: PlanContext) -> Reading:
        """The question's one reading, shared by the rule planner and the verifier."""
        values = self.s.values.values_for(self.tenant_id) if self.s.values is not None else None
        self.reading = read_question(
            self.question,
            self.s.catalog,
            now=self.s.now,
            values=values,
            context_entities=context_entities(pctx),
        )
        return self.reading

    def clarify(self, plan: Plan | None, verdict: Verdict | None = None) -> AnswerResult:
        """Ask back, naming what was not applied when the reading says so."""
        reading = self.reading
        sentence = None
        if verdict is not None:
            sentence = _sentence(verdict, self.lang)
        elif reading is not None and reading.problems:
            sentence = problems_text(reading.problems, reading.entity, reading.language)
        answer = clarification(self.lang, catalog=self.s.catalog, sentence=sentence)
        return self.without_answer("clarify", plan, answer, verdict)

    def finish(self, **kw: Any) -> AnswerResult:
        res = AnswerResult(
            trace_id=self.audit.trace_id,
            language=self.lang,
            planner=self.planner_name,
            attempts=tuple(self.attempts),
            warnings=self.warnings,
            **kw,
        )
        self.audit.event(
            "result",
            status=res.status,
            query_type=res.query_type.value if res.query_type else None,
            answer_contract=res.answer_contract.value if res.answer_contract else None,
            outcome=res.verdict.outcome.value if res.verdict else None,
            failed=list(res.verdict.failed) if res.verdict else [],
            evidence_count=len(res.evidence),
            elapsed_ms=round((time.perf_counter() - self.started) * 1000, 3),
        )
        return res

    def binding_context(self, pctx: PlanContext) -> PlanContext:
        """The context the plan is bound in: the conversation's objects narrow only a
        question that points at them (它, this project), not every question about
        their entity type."""
        if self.reading is None or self.reading.pronoun or not pctx.referenced_objects:
            return pctx
        return replace(pctx, referenced_objects=())

    def make_plan(
        self, pctx: PlanContext, feedback: str | None
    ) -> Generator[PlanCall, Any, NormalizedPlan]:
        with self.audit.timed("plan") as ev:
            try:
                planner = self.s.planner
                if isinstance(planner, RulePlanner) and self.reading is not None:
                    # The reading made once is planned directly: no print and reparse.
                    raw, _ = planner.plan_reading(
                        self.reading, catalog=self.s.catalog, context=pctx, feedback=feedback
                    )
                    self.planner_name = planner.name
                    ev.update(planner=planner.name, attempts=0)
                    normalized = compile_plan_object(
                        raw, self.s.catalog, self.binding_context(pctx)
                    )
                else:
                    # The driver runs the planner: called, awaited or in a worker thread.
                    draft = yield PlanCall(planner, self.question, self.s.catalog, pctx, feedback)
                    assert isinstance(draft, PlanDraft)
                    self.planner_name = draft.planner
                    self.attempts.extend(draft.attempts)
                    ev.update(planner=draft.planner, attempts=len(draft.attempts))
                    if draft.planner != planner.name:
                        ev.update(fallback=True)
                    ev.update(self.log_attempts([attempt_event(a) for a in draft.attempts]))
                    normalized = compile_source(
                        draft.text, self.s.catalog, self.binding_context(pctx)
                    )
            except QdslError as exc:
                ev.update(status="error", error_code=exc.code)
                ev.update(self.log_attempts(exc.details.get("attempts")))
                raise
            self.warnings = normalized.warnings
            ev.update(
                plan_shape(normalized.plan, normalized.plan_hash),
                warnings=len(normalized.warnings),
            )
            return normalized

    def verify_context(self) -> VerifyContext:
        reading = self.reading
        expected = reading.query_type if reading is not None and reading.entity else None
        return VerifyContext(
            tenant_id=self.tenant_id,
            route_mode=self.s.route_mode,
            now=self.s.now,
            catalog=self.s.catalog,
            expected_query_type=expected,
            question=reading,
        )

    def judge(self, plan: Plan, result: ExecutionResult) -> tuple[Answer, Verdict]:
        answer = render(plan, result, language=self.lang, catalog=self.s.catalog)
        with self.audit.timed("verify") as ev:
            kwargs: dict[str, Any] = {} if self.s.checks is None else {"checks": self.s.checks}
            verdict = verify(plan, result, answer, context=self.verify_context(), **kwargs)
            ev.update(
                outcome=verdict.outcome.value,
                failed=list(verdict.failed),
                checks_run=list(verdict.checks_run),
            )
        return answer, verdict

    def answered(
        self, plan: Plan, result: ExecutionResult, answer: Answer, verdict: Verdict
    ) -> AnswerResult:
        known = result.evidence_by_id()
        return self.finish(
            status="answered",
            query_type=plan.query_type,
            answer_contract=answer.contract,
            text=answer.text,
            data=answer.data,
            evidence=tuple(known[i] for i in answer.cited_evidence if i in known),
            plan=plan,
            verdict=verdict,
            execution_id=result.execution_id,
        )

    def without_answer(
        self,
        status: Status,
        plan: Plan | None,
        answer: Answer,
        verdict: Verdict | None = None,
        execution_id: str | None = None,
    ) -> AnswerResult:
        return self.finish(
            status=status,
            query_type=plan.query_type if plan else None,
            answer_contract=answer.contract,
            text=answer.text,
            data=answer.data,
            plan=plan,
            verdict=verdict,
            execution_id=execution_id,
        )

    def insufficient(
        self, plan: Plan, verdict: Verdict | None = None, execution_id: str | None = None
    ) -> AnswerResult:
        contract = plan.answer_contract or AnswerContract.CLARIFY_OR_FAIL
        return self.without_answer(
            "insufficient_evidence",
            plan,
            insufficient(self.lang, contract),
            verdict,
            execution_id,
        )

    def log_attempts(self, attempts: object) -> dict[str, list[Any]]:
        """One audit event per planner attempt (outcome, error code, cost), and the
        run's attempts so far as lists for the plan event and the summary."""
        if isinstance(attempts, list):
            for a in attempts:
                if isinstance(a, dict):
                    fields = {k: v for k, v in a.items() if k not in ("message", "number")}
                    fields["attempt"] = a.get("number")
                    fields["attempt_outcome"] = "refused" if a.get("error_code") else "accepted"
                    self.audit.event("llm_attempt", **fields)
        done = [attempt_event(a) for a in self.attempts]
        if isinstance(attempts, list) and not done:
            done = [a for a in attempts if isinstance(a, dict)]
        return {
            "attempt_error_codes": [a.get("error_code") for a in done],
            "attempt_elapsed_ms": [a.get("elapsed_ms") for a in done],
            "input_tokens": [a.get("input_tokens") for a in done],
            "output_tokens": [a.get("output_tokens") for a in done],
        }

    def unplanned(self, exc: PlanError) -> AnswerResult:
        """No plan: the LLM API failed. No answer, and never another planner's guess
        passed off as the LLM's (a fallback planner is the LLM planner's explicit option).
        Any other plan error is the caller's to see."""
        if exc.code != LLM_UNAVAILABLE:
            raise exc
        answer = insufficient(self.lang, AnswerContract.CLARIFY_OR_FAIL)
        return self.finish(
            status="insufficient_evidence",
            answer_contract=answer.contract,
            text=answer.text,
            error=exc,
        )

    def on_empty(self, plan: Plan, result: ExecutionResult) -> AnswerResult | None:
        """An empty result's own outcome (clarify, insufficient_evidence), else None."""
        policy = kind_of(plan.query_type).on_empty
        if policy is EmptyResult.ANSWER or result.rows:
            return None
        if plan.clarify_on_empty:
            return self.without_answer(
                "clarify", plan, clarification(self.lang, catalog=self.s.catalog)
            )
        if policy is EmptyResult.INSUFFICIENT:
            return self.insufficient(plan, execution_id=result.execution_id)
        return None

    def not_covered(self, plan: Plan | None, exc: NotCoveredError) -> AnswerResult:
        return self.without_answer("not_covered", plan, not_covered(self.lang, exc.message))

    def refused(self, plan: Plan, verdict: Verdict, execution_id: str) -> AnswerResult:
        self.audit.event("refused", outcome=verdict.outcome.value, failed=list(verdict.failed))
        contract = plan.answer_contract or AnswerContract.CLARIFY_OR_FAIL
        answer = refused(self.lang, contract, verdict.failed)
        return self.without_answer("refused", plan, answer, verdict, execution_id)


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
    run = _Run("", tenant_id, settings, audit)
    run.lang = language
    audit.begin(tenant_id, None)
    audit.event("plan", **plan_shape(plan), planner="caller")
    if plan.query_type is QueryType.UNKNOWN:
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


def _sentence(verdict: Verdict, lang: Language) -> str:
    sep = "；" if lang == "zh" else "; "
    return sep.join(i.message for i in verdict.errors() if i.check == question_covered.__name__)


def _only_question_gaps(verdict: Verdict) -> bool:
    """Every error is question_covered's asking for a clarified plan."""
    errors = verdict.errors()
    return bool(errors) and all(
        i.check == question_covered.__name__ and i.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN
        for i in errors
    )


def answer_flow(question: str, tenant_id: str, s: Settings, audit: Audit) -> Flow:
    """The pipeline for one question; every way it ends leaves one audit summary."""
    audit.begin(tenant_id, question)
    try:
        return (yield from _answer_flow(question, tenant_id, s, audit))
    except QdslError as exc:
        audit.failed(exc)
        raise


def _answer_flow(question: str, tenant_id: str, s: Settings, audit: Audit) -> Flow:
    run = _Run(question, tenant_id, s, audit)
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
    pctx = plan_context(tenant_id, s.context)
    run.read(pctx)
    feedback: str | None = None
    for replan in range(s.replans + 1):
        try:
            normalized = yield from run.make_plan(pctx, feedback)
        except NotCoveredError as exc:
            return run.not_covered(None, exc)
        except PlanError as exc:
            return run.unplanned(exc)
        plan = normalized.plan
        if plan.query_type is QueryType.UNKNOWN:
            return run.clarify(plan)
        verdict: Verdict | None = None
        result: ExecutionResult | None = None
        for attempt in range(s.same_plan_tries):
            try:
                # bound once, by the normalizer: the executor compiles it as it is
                result = yield normalized.bound or plan
                assert isinstance(result, ExecutionResult)
            except NotCoveredError as exc:
                audit.event("execute", status="not_covered", error_code=exc.code)
                return run.not_covered(plan, exc)
            except QdslError as exc:
                audit.event("execute", status="error", error_code=exc.code)
                raise
            audit.event(
                "execute",
                template=result.template,
                sql_fingerprints=list(result.sql_fingerprints),
                execution_id=result.execution_id,
                row_count=len(result.rows),
                evidence_count=len(result.evidence),
                count_present=result.count is not None,
                baseline_present=result.baseline_total is not None,
                retrieval=result.retrieval,
                used_fallback=result.used_fallback,
                elapsed_ms=result.elapsed_ms,
                attempt=attempt + 1,
            )
            empty = run.on_empty(plan, result)
            if empty is not None:
                return empty
            answer, verdict = run.judge(plan, result)
            if verdict.ok:
                return run.answered(plan, result, answer, verdict)
            if not verdict.retryable or verdict.outcome is not Outcome.RETRY_WITH_SAME_PLAN:
                break
            audit.event("retry", retry="same_plan", attempt=attempt + 1)
        assert verdict is not None and result is not None
        if verdict.retryable and verdict.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN:
            if replan < s.replans:
                feedback = feedback_for(verdict, plan)
                audit.event("retry", retry="clarified_plan", attempt=replan + 1)
                continue
            if _only_question_gaps(verdict):
                # Out of replans with the question not covered: ask, naming the gap.
                return run.clarify(plan, verdict)
        elif verdict.retryable and verdict.outcome is Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE:
            return run.insufficient(plan, verdict, result.execution_id)
        return run.refused(plan, verdict, result.execution_id)
    raise AssertionError("unreachable: the replan loop always returns")
