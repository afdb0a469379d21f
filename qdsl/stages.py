"""The stages of answering one question: one `Run` per request, whose methods
read the question, plan, judge an executed plan and end the request (each way
of ending leaves its audit events). `qdsl.pipeline` strings them together.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from qdsl.abstentions import clarification, insufficient, not_covered, refused
from qdsl.answer_types import AnswerResult, PlanCall, Settings, Status
from qdsl.audit import Audit, plan_shape
from qdsl.dsl.errors import NotCoveredError, PlanError, QdslError
from qdsl.dsl.ir import AnswerContract, Plan
from qdsl.dsl.kinds import EmptyResult, kind_of
from qdsl.dsl.normalize import NormalizedPlan, PlanContext
from qdsl.dsl.plan.plan_cache import compile_plan_object, compile_source
from qdsl.dsl.plan.printer import to_text
from qdsl.dsl.question import Reading, problems_text, read_question
from qdsl.executor.result import ExecutionResult
from qdsl.one_subject import several_subjects
from qdsl.phrases import detect_language, entity_name
from qdsl.planner import Attempt, PlanDraft
from qdsl.planner.rule import RulePlanner, context_entities
from qdsl.render import render
from qdsl.verifier import Answer, Language, Verdict, VerifyContext, verify
from qdsl.verifier.checks.question import question_covered

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


class Run:
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
            # a person reads this: the entity by its own name in the language (员工, not
            # the catalog key); the planner's notes keep the key, which a plan must use
            named = (
                entity_name(self.s.catalog, reading.entity, reading.language)
                if reading.entity
                else None
            )
            sentence = problems_text(reading.problems, named, reading.language)
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
            self.warnings = normalized.warnings + self.unscoped(pctx, normalized.plan)
            ev.update(
                plan_shape(normalized.plan, normalized.plan_hash),
                warnings=len(normalized.warnings),
            )
            return normalized

    def unscoped(self, pctx: PlanContext, plan: Plan) -> tuple[str, ...]:
        """Why the conversation's project does not scope `plan`, when it does not."""
        scope = self.s.catalog.scope
        if pctx.project_id is None or plan.scope.project_id is not None or scope is None:
            return ()
        if plan.entity_type == scope.entity:
            why = f"it asks about {scope.entity} themselves"
        elif self.s.catalog.scope_field(plan.entity_type) is None:
            why = f"{plan.entity_type} has no field referencing {scope.entity}"
        else:
            why = "the question states its own condition on it"
        return (f"the context's {scope.entity} {pctx.project_id} does not scope this plan: {why}",)

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

    def executed(self, result: ExecutionResult, attempt: int) -> None:
        """The execute event: what ran and what came back, never a value."""
        self.audit.event(
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
            attempt=attempt,
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

    def on_several(self, plan: Plan, result: ExecutionResult) -> AnswerResult | None:
        """A snapshot that found several objects: ask which one (`qdsl.one_subject`)."""
        sentence = several_subjects(plan, result, self.s.catalog, self.lang)
        if sentence is None:
            return None
        answer = clarification(self.lang, catalog=self.s.catalog, sentence=sentence)
        return self.without_answer("clarify", plan, answer, None, result.execution_id)

    def not_covered(self, plan: Plan | None, exc: NotCoveredError) -> AnswerResult:
        return self.without_answer("not_covered", plan, not_covered(self.lang, exc.message))

    def refused(self, plan: Plan, verdict: Verdict, execution_id: str) -> AnswerResult:
        self.audit.event("refused", outcome=verdict.outcome.value, failed=list(verdict.failed))
        contract = plan.answer_contract or AnswerContract.CLARIFY_OR_FAIL
        answer = refused(self.lang, contract, verdict.failed)
        return self.without_answer("refused", plan, answer, verdict, execution_id)


def _sentence(verdict: Verdict, lang: Language) -> str:
    sep = "；" if lang == "zh" else "; "
    return sep.join(i.message for i in verdict.errors() if i.check == question_covered.__name__)
