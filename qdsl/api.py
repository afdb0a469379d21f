"""plan_and_answer() and aplan_and_answer(): a question to a verified answer.

Both drive the same generator (`qdsl.pipeline.answer_flow`) and take the same
`AnswerOptions`; only the engine and the executor call differ. The default
engine is the embedded SQLite demo, created and seeded on first use, and its
fixed demo "now" judges freshness.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from qdsl.audit import Audit, AuditSink, audited_error
from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog_files import resolve_catalog_cached
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.limits import held_limits
from qdsl.dsl.linking import TenantValues, ValueSource
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor.result import ExecutionResult
from qdsl.gate import GateLexicon
from qdsl.pipeline import AnswerResult, Flow, PlanCall, Settings, Status, answer_flow
from qdsl.planner import PlanDraft, Planner, RulePlanner
from qdsl.verifier.checks import Check

if TYPE_CHECKING:
    # sqlalchemy.ext.asyncio pulls in asyncio and the ORM: only the async twin needs it.
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "AnswerOptions",
    "AnswerResult",
    "Status",
    "aplan_and_answer",
    "demo_engine",
    "plan_and_answer",
]


def demo_engine() -> Engine:
    """The embedded SQLite demo database (in the current state dir), seeded on first use."""
    from qdsl.facts.db import default_database_url

    return _seeded_engine(default_database_url())


@lru_cache(maxsize=8)
def _seeded_engine(url: str) -> Engine:
    from qdsl.facts.db import make_engine
    from qdsl.facts.demo.setup import ensure_demo

    ensure_demo(url)
    return make_engine(url)


def _demo_now() -> datetime:
    from qdsl.facts.demo import DEMO_NOW

    return DEMO_NOW


@dataclass(frozen=True, kw_only=True)
class AnswerOptions:
    """How to answer, beyond the question and the tenant; the same for both twins.

    `catalog` is a Catalog or the path of a catalog TOML (default: `QDSL_CATALOG`,
    else the shipped demo catalog). `now` judges fact freshness (default: the
    clock, or the demo's fixed "now" on the embedded demo database). `checks` are
    verifier checks added to the plan's and the mandatory ones. `trace_id` keys
    the audit events, which go to `audit_sink` when given.
    """

    planner: Planner | None = None
    route_mode: str = "internal"
    context: PlanContext | None = None
    catalog: Catalog | str | os.PathLike[str] | None = None
    now: datetime | None = None
    lexicon: GateLexicon | None = None
    checks: tuple[Check, ...] = ()
    trace_id: str | None = None
    audit_sink: AuditSink | None = None
    # Where the asking tenant's linkable values come from (None: the value index of
    # the database the question runs on, qdsl.facts.value_index).
    values: ValueSource | None = None
    # The statement timeout of each execution (None: QDSL_STATEMENT_TIMEOUT_MS, else 5 s).
    timeout_ms: int | None = None

    def settings(
        self, *, demo: bool, values: Callable[[Catalog], ValueSource] | None = None
    ) -> Settings:
        """The options resolved for one request (every default filled in; `values`
        makes the value source for the resolved catalog when the options give none)."""
        now = self.now
        if now is None:
            now = _demo_now() if demo else datetime.now(UTC)
        catalog = self.catalog
        if not isinstance(catalog, Catalog):
            # A file is parsed again only when it changed: the catalog object, and
            # every cache keyed on it, stays the same across requests.
            catalog = resolve_catalog_cached(catalog)
        return Settings(
            catalog=catalog,
            planner=self.planner or RulePlanner(),
            now=now,
            route_mode=self.route_mode,
            context=self.context,
            lexicon=self.lexicon,
            checks=self.checks,
            values=self.values if self.values is not None or values is None else values(catalog),
        )


_DEFAULTS = AnswerOptions()


class _DatabaseValues:
    """The asking tenant's linkable values, from the database the question runs on
    (`qdsl.facts.value_index`), opened on first use: a gated question opens nothing."""

    def __init__(self, engine: Callable[[], Engine | AsyncEngine], catalog: Catalog) -> None:
        self.engine, self.catalog = engine, catalog

    def values_for(self, tenant_id: str) -> TenantValues:
        from sqlalchemy.exc import SQLAlchemyError

        from qdsl.executor.run import db_error, timeout_from_env
        from qdsl.facts.value_index import value_source_for

        engine = self.engine()
        try:
            return value_source_for(engine, self.catalog).values_for(tenant_id)
        except SQLAlchemyError as exc:
            # The same typed error the executor gives for this database.
            timeout = timeout_from_env(None)
            raise db_error(
                exc, timeout, interrupted=False, catalog=self.catalog, url=engine.url
            ) from None


def _begin(
    question: str,
    tenant_id: str,
    options: AnswerOptions,
    *,
    demo: bool,
    engine: Callable[[], Engine | AsyncEngine],
) -> tuple[Settings, Flow, BoundPlan | Plan | PlanCall | None, AnswerResult | None]:
    """Start the shared pipeline: its first plan to execute, or its early answer."""
    settings = options.settings(demo=demo, values=lambda catalog: _DatabaseValues(engine, catalog))
    audit = Audit(options.trace_id or uuid.uuid4().hex, options.audit_sink)
    flow = answer_flow(question, tenant_id, settings, audit)
    try:
        return settings, flow, next(flow), None
    except StopIteration as stop:
        return settings, flow, None, stop.value


def plan_and_answer(
    question: str,
    tenant_id: str,
    *,
    engine: Engine | None = None,
    options: AnswerOptions = _DEFAULTS,
) -> AnswerResult:
    """Answer `question` for `tenant_id`, or say why not (status), never unverified.

    `engine` defaults to the embedded SQLite demo database.
    """
    with held_limits():
        try:
            return _plan_and_answer(question, tenant_id, engine, options)
        except QdslError as exc:
            raise _audited(exc, tenant_id, options) from None


def _plan_and_answer(
    question: str, tenant_id: str, engine: Engine | None, options: AnswerOptions
) -> AnswerResult:
    from qdsl.executor.run import execute

    tenant_id = valid_tenant(tenant_id)
    settings, flow, plan, done = _begin(
        question, tenant_id, options, demo=engine is None, engine=lambda: engine or demo_engine()
    )
    eng: Engine | None = None
    while done is None:
        assert plan is not None
        if isinstance(plan, PlanCall):
            plan, done = _plan_step(flow, plan.run)
            continue
        try:
            eng = eng or engine or demo_engine()
            result: ExecutionResult = execute(
                plan,
                settings.catalog,
                eng,
                tenant_id,
                timeout_ms=options.timeout_ms,
                now=settings.now,
            )
        except QdslError as exc:
            plan, done = _step(flow, exc=exc)
            continue
        plan, done = _step(flow, result=result)
    return done


async def aplan_and_answer(
    question: str,
    tenant_id: str,
    *,
    engine: AsyncEngine | None = None,
    options: AnswerOptions = _DEFAULTS,
) -> AnswerResult:
    """The asyncio twin of `plan_and_answer`, on an SQLAlchemy AsyncEngine.

    The pipeline's synchronous steps (reading the question, planning, the value
    index, verifying) run in a worker thread, so the event loop is never held
    by them; only the statements run on the loop, and cancelling the task
    cancels the statement in flight.
    """
    with held_limits():
        try:
            return await _aplan_and_answer(question, tenant_id, engine, options)
        except QdslError as exc:
            raise _audited(exc, tenant_id, options) from None


def _audited(exc: QdslError, tenant_id: object, options: AnswerOptions) -> QdslError:
    """An error raised before the request's audit began (a tenant, a catalog) is
    audited too, so every error leaves with `trace_id` set (or is the fault of
    the audit log itself)."""
    tenant = tenant_id if isinstance(tenant_id, str) else None
    return audited_error(exc, operation="plan_and_answer", tenant=tenant, sink=options.audit_sink)


async def _aplan_and_answer(
    question: str, tenant_id: str, engine: AsyncEngine | None, options: AnswerOptions
) -> AnswerResult:
    import asyncio

    from qdsl.executor.run import aexecute

    tenant_id = valid_tenant(tenant_id)
    settings, flow, plan, done = await asyncio.to_thread(
        _begin,
        question,
        tenant_id,
        options,
        demo=engine is None,
        engine=lambda: engine or demo_engine(),
    )
    own: AsyncEngine | None = None
    try:
        while done is None:
            assert plan is not None
            if isinstance(plan, PlanCall):
                try:
                    draft = await plan.arun()
                except QdslError as exc:
                    plan, done = await asyncio.to_thread(_step, flow, exc=exc)
                    continue
                plan, done = await asyncio.to_thread(_step, flow, result=draft)
                continue
            try:
                if engine is None and own is None:
                    own = _demo_async_engine()
                eng = engine or own
                assert eng is not None
                result = await aexecute(
                    plan,
                    settings.catalog,
                    eng,
                    tenant_id,
                    timeout_ms=options.timeout_ms,
                    now=settings.now,
                )
            except QdslError as exc:
                plan, done = await asyncio.to_thread(_step, flow, exc=exc)
                continue
            plan, done = await asyncio.to_thread(_step, flow, result=result)
    finally:
        if own is not None:
            await own.dispose()
    return done


def _demo_async_engine() -> AsyncEngine:
    from qdsl.facts.db import default_database_url, make_async_engine

    url = default_database_url()
    _seeded_engine(url)  # seeds the file on first use
    return make_async_engine(url)


def _plan_step(
    flow: Flow, run: Callable[[], PlanDraft]
) -> tuple[BoundPlan | Plan | PlanCall | None, AnswerResult | None]:
    try:
        draft = run()
    except QdslError as exc:
        return _step(flow, exc=exc)
    return _step(flow, result=draft)


def _step(
    flow: Flow,
    *,
    result: ExecutionResult | PlanDraft | None = None,
    exc: QdslError | None = None,
) -> tuple[BoundPlan | Plan | PlanCall | None, AnswerResult | None]:
    try:
        if exc is not None:
            return flow.throw(exc), None
        assert result is not None
        return flow.send(result), None
    except StopIteration as stop:
        return None, stop.value
