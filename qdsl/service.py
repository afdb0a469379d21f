"""The operations every entry point serves, over one `Deployment`.

`Service(deployment)` asks (the whole pipeline, sync and asyncio), runs a
caller's plan and verifies its answer, compiles a plan, verifies an answer
given from elsewhere and evaluates a case file. The Python API
(`qdsl.api`), the CLI (`qdsl/cli/`) and the MCP server (`qdsl/mcp/`) are
adapters around it: they parse their input, call one operation, and shape
what it returns (an `AnswerResult`, an `ExecutionResult`, a `Verdict`, a
`Report`) for their callers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from qdsl.audit import Audit, audited_error
from qdsl.deployment import Deployment
from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.settings.limits import held_limits
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor.result import ExecutionResult
from qdsl.gate import GateLexicon
from qdsl.pipeline import (
    AnswerResult,
    Flow,
    PlanCall,
    Settings,
    Step,
    answer_flow,
    plan_step,
    step,
)
from qdsl.planner import PlanDraft, Planner, RulePlanner
from qdsl.verifier.checks import Check

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.ext.asyncio import AsyncEngine

    from qdsl.dsl.normalize.env import NormalizedPlan
    from qdsl.evaluate import Case, Report
    from qdsl.executor.compile import CompiledPlan
    from qdsl.verifier import Answer, Verdict

__all__ = ["AskRequest", "Ran", "Service", "answer_data"]


@dataclass(frozen=True, kw_only=True)
class AskRequest:
    """What one question asks beyond the deployment: the planner (default the rule
    planner), the router's decision, the caller's context and added checks."""

    planner: Planner | None = None
    route_mode: str = "internal"
    context: PlanContext | None = None
    lexicon: GateLexicon | None = None
    checks: tuple[Check, ...] = ()
    trace_id: str | None = None


_PLAIN = AskRequest()


@dataclass(frozen=True)
class Ran:
    """A caller's plan, executed and its answer verified (`qdsl run`, `run_plan`)."""

    plan: Plan
    result: ExecutionResult
    answer: AnswerResult
    now: datetime
    warnings: list[str]
    tenant_id: str

    def data(self) -> dict[str, Any]:
        """`qdsl run`'s envelope data: the verified answer, the result signed for
        `qdsl verify --result` (which trusts nothing else), the plan, `now`."""
        from qdsl.result_mac import sign_result

        printed = self.result.model_dump(mode="json")
        printed["mac"] = sign_result(self.tenant_id, printed)
        return {
            **answer_data(self.answer),
            "result": printed,
            "plan": self.plan.to_json_dict(),
            "now": self.now.isoformat(),
        }


def answer_data(res: AnswerResult) -> dict[str, Any]:
    """The `ask` / `run` envelope data: the answer's fields and, when a typed error
    ended it without an answer (the LLM API unavailable), that error; else null."""
    return {**res.to_dict(), "error": res.error.to_dict() if res.error is not None else None}


class Service:
    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment

    # ------------------------------------------------------------------ ask
    def settings(
        self,
        request: AskRequest = _PLAIN,
        *,
        now: datetime | None = None,
        engine: Callable[[], Engine | AsyncEngine] | None = None,
    ) -> Settings:
        """The pipeline's settings for one request (its clock read once)."""
        d = self.deployment
        return Settings(
            catalog=d.catalog,
            planner=request.planner or RulePlanner(),
            now=now or d.now(),
            route_mode=request.route_mode,
            context=request.context,
            lexicon=request.lexicon,
            checks=request.checks,
            values=d.value_source(engine),
        )

    def _begin(
        self,
        question: str,
        tenant_id: str,
        request: AskRequest,
        engine: Callable[[], Engine | AsyncEngine] | None = None,
    ) -> tuple[Settings, Flow, Step]:
        settings = self.settings(request, engine=engine)
        audit = Audit(request.trace_id or uuid.uuid4().hex, self.deployment.audit_sink)
        flow = answer_flow(question, tenant_id, settings, audit)
        try:
            return settings, flow, (next(flow), None)
        except StopIteration as stop:
            return settings, flow, (None, stop.value)

    def ask(self, question: str, tenant_id: str, request: AskRequest = _PLAIN) -> AnswerResult:
        """Answer `question` for `tenant_id`, or say why not (status), never unverified."""
        with held_limits():
            return self._ask(question, tenant_id, request)

    def _ask(self, question: str, tenant_id: str, request: AskRequest) -> AnswerResult:
        from qdsl.executor.run import execute

        try:
            tenant_id = valid_tenant(tenant_id)
            settings, flow, (plan, done) = self._begin(question, tenant_id, request)
            while done is None:
                assert plan is not None
                if isinstance(plan, PlanCall):
                    plan, done = plan_step(flow, plan.run)
                    continue
                try:
                    result = execute(
                        plan,
                        settings.catalog,
                        self.deployment.reader_for(requires_fresh(plan)),
                        tenant_id,
                        timeout_ms=self.deployment.timeout_ms,
                        now=settings.now,
                    )
                except QdslError as exc:
                    plan, done = step(flow, exc=exc)
                    continue
                plan, done = step(flow, result=result)
            return done
        except QdslError as exc:
            raise self.audited(exc, tenant_id, "plan_and_answer") from None

    async def aask(
        self,
        question: str,
        tenant_id: str,
        request: AskRequest = _PLAIN,
        *,
        engine: AsyncEngine | None = None,
        read_engine: AsyncEngine | None = None,
    ) -> AnswerResult:
        """The asyncio twin of `ask`, on `engine` (default: one of the deployment's
        database, made for this request). Plans read `read_engine` (default: one on
        the deployment's read URL when it has one and no `engine` is given), but
        those requiring fresh facts, which read the primary. The synchronous steps
        run in a worker thread; only the statements run on the loop."""
        try:
            with held_limits():
                return await self._aask(question, tenant_id, request, engine, read_engine)
        except QdslError as exc:
            raise self.audited(exc, tenant_id, "plan_and_answer") from None

    async def _aask(
        self,
        question: str,
        tenant_id: str,
        request: AskRequest,
        engine: AsyncEngine | None,
        read_engine: AsyncEngine | None,
    ) -> AnswerResult:
        import asyncio

        from qdsl.executor.run import aexecute

        tenant_id = valid_tenant(tenant_id)
        given = read_engine or engine

        def values_engine() -> Engine | AsyncEngine:
            # the value index is read where plans read
            return self.deployment.read_engine() if given is None else given

        settings, flow, (plan, done) = await asyncio.to_thread(
            self._begin, question, tenant_id, request, values_engine
        )
        own: AsyncEngine | None = None
        own_reader = None
        if read_engine is None and engine is None:
            own_reader = read_engine = self.deployment.async_read_engine()
        try:
            while done is None:
                assert plan is not None
                if isinstance(plan, PlanCall):
                    try:
                        draft = await plan.arun()
                    except QdslError as exc:
                        plan, done = await asyncio.to_thread(step, flow, exc=exc)
                        continue
                    plan, done = await asyncio.to_thread(step, flow, result=draft)
                    continue
                try:
                    eng: AsyncEngine | None = read_engine
                    if eng is None or requires_fresh(plan):
                        if engine is None and own is None:
                            own = self.deployment.async_engine()
                        eng = engine or own
                    assert eng is not None
                    result = await aexecute(
                        plan,
                        settings.catalog,
                        eng,
                        tenant_id,
                        timeout_ms=self.deployment.timeout_ms,
                        now=settings.now,
                    )
                except QdslError as exc:
                    plan, done = await asyncio.to_thread(step, flow, exc=exc)
                    continue
                plan, done = await asyncio.to_thread(step, flow, result=result)
        finally:
            if own is not None:
                await own.dispose()
            if own_reader is not None:
                await own_reader.dispose()
        return done

    def audited(self, exc: QdslError, tenant_id: object, operation: str) -> QdslError:
        """An error raised before the request's audit began (a tenant, a catalog) is
        audited too, so every error leaves with `trace_id` set (or is the fault of
        the audit log itself)."""
        tenant = tenant_id if isinstance(tenant_id, str) else None
        return audited_error(
            exc, operation=operation, tenant=tenant, sink=self.deployment.audit_sink
        )

    # ------------------------------------------------------ a caller's plan
    def normalized(self, source: str, tenant_id: str | None) -> NormalizedPlan:
        """The plan text or JSON, parsed and normalized for `tenant_id` (compiled once)."""
        from qdsl.dsl.plan.plan_cache import compile_source

        return compile_source(source, self.deployment.catalog, PlanContext(tenant_id=tenant_id))

    def compile(
        self, source: str, tenant_id: str | None, dialect: str
    ) -> tuple[Plan, CompiledPlan, list[str]]:
        """The plan's SQL and bound parameters in `dialect`, without a database."""
        from qdsl.executor.compile import compile_plan

        norm = self.normalized(source, tenant_id)
        compiled = compile_plan(norm.plan, self.deployment.catalog, dialect, tenant_id=tenant_id)
        return norm.plan, compiled, list(norm.warnings)

    def execute(
        self, source: str, tenant_id: str, *, timeout_ms: int | None = None
    ) -> tuple[NormalizedPlan, ExecutionResult, datetime]:
        """Run a caller's plan: (the normalized plan, its result, the `now` it used).
        The plan is bound once, by the normalizer; the executor runs that binding."""
        from qdsl.executor.run import execute

        norm = self.normalized(source, tenant_id)
        moment = self.deployment.now()
        result = execute(
            norm.bound or norm.plan,
            self.deployment.catalog,
            self.deployment.reader_for(requires_fresh(norm.plan)),
            tenant_id,
            timeout_ms=timeout_ms if timeout_ms is not None else self.deployment.timeout_ms,
            now=moment,
        )
        return norm, result, moment

    def verified(
        self, plan: Plan, result: ExecutionResult, tenant_id: str, now: datetime
    ) -> AnswerResult:
        """Render and verify an executed plan (no planner: the plan is the caller's)."""
        from qdsl.pipeline import verified_answer

        settings = Settings(catalog=self.deployment.catalog, planner=_NO_PLANNER, now=now)
        return verified_answer(
            plan,
            result,
            tenant_id=tenant_id,
            settings=settings,
            audit=Audit(uuid.uuid4().hex, self.deployment.audit_sink),
        )

    async def aexecute(
        self, norm: NormalizedPlan, tenant_id: str, engine: AsyncEngine, now: datetime
    ) -> ExecutionResult:
        """The asyncio twin of `execute`'s statements, for a plan normalized already."""
        from qdsl.executor.run import aexecute

        return await aexecute(
            norm.bound or norm.plan,
            self.deployment.catalog,
            engine,
            tenant_id,
            timeout_ms=self.deployment.timeout_ms,
            now=now,
        )

    def answered(
        self, norm: NormalizedPlan, result: ExecutionResult, tenant_id: str, now: datetime
    ) -> Ran:
        """An executed caller's plan with its verified answer."""
        answer = self.verified(norm.plan, result, tenant_id, now)
        return Ran(norm.plan, result, answer, now, list(norm.warnings), tenant_id)

    def run(self, source: str, tenant_id: str, *, timeout_ms: int | None = None) -> Ran:
        """Execute a caller's plan and verify its answer; a plan that fails before it
        is answered (policy, plan, database) is audited under the caller's tenant."""
        try:
            norm, result, moment = self.execute(source, tenant_id, timeout_ms=timeout_ms)
        except QdslError as exc:
            raise self.audited(exc, tenant_id, "run") from None
        return self.answered(norm, result, tenant_id, moment)

    # -------------------------------------------------------------- verify
    def verify(
        self,
        plan: Plan,
        result: ExecutionResult,
        answer: Answer,
        *,
        tenant_id: str,
        question: str | None = None,
        route_mode: str = "internal",
        now: datetime | None = None,
    ) -> Verdict:
        """Judge an answer (ours or one written elsewhere) against a plan and its
        result; the question, when given, is read on its own (question_covered)."""
        from qdsl.dsl.question import read_question
        from qdsl.verifier import VerifyContext
        from qdsl.verifier import verify as judge

        moment = now or self.deployment.now()
        catalog = self.deployment.catalog
        reading = read_question(question, catalog, now=moment) if question else None
        context = VerifyContext(
            tenant_id=tenant_id,
            route_mode=route_mode,
            now=moment,
            catalog=catalog,
            expected_query_type=reading.query_type if reading and reading.entity else None,
            question=reading,
        )
        return judge(plan, result, answer, context=context)

    # ---------------------------------------------------------------- eval
    def eval(self, cases: Sequence[Case], planner: Planner | None = None) -> Report:
        """Ask every case (each on its own clock, else the deployment's) and judge it."""
        from qdsl.evaluate import plan_and_answer_asker, run_cases

        ask = plan_and_answer_asker(
            engine=self.deployment.engine(),
            catalog=self.deployment.catalog,
            default_now=self.deployment.now(),
            planner=planner,
        )
        return run_cases(cases, ask)


def requires_fresh(plan: Plan | BoundPlan) -> bool:
    """Whether `plan` asks for fresh facts only (it then reads the primary)."""
    raw = plan.plan if isinstance(plan, BoundPlan) else plan
    return raw.retrieval_policy.require_fresh_fact


class _CallersPlan:
    """A caller's plan is never re-planned: verifying it asks no planner."""

    name = "caller"

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        raise AssertionError("a caller's plan is verified, never re-planned")


_NO_PLANNER: Planner = _CallersPlan()
