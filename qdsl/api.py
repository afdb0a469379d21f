"""plan_and_answer() and aplan_and_answer(): a question to a verified answer.

Both are the Python API's adapter of `qdsl.service.Service.ask`: the options
resolve one `Deployment` for the request (`qdsl.deployment.resolve`), and the
service drives the shared pipeline generator. The default engine is the
embedded SQLite demo, created and seeded on first use, and its fixed demo
"now" judges freshness.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from qdsl.audit import AuditSink, audited_error
from qdsl.deployment import Deployment, read_engine_without_primary, resolve
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.linking import ValueSource
from qdsl.dsl.normalize import PlanContext
from qdsl.gate import GateLexicon
from qdsl.pipeline import AnswerResult, Settings, Status
from qdsl.planner import Planner
from qdsl.service import AskRequest, Service
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
    return resolve().engine()


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

    def request(self) -> AskRequest:
        return AskRequest(
            planner=self.planner,
            route_mode=self.route_mode,
            context=self.context,
            lexicon=self.lexicon,
            checks=self.checks,
            trace_id=self.trace_id,
        )

    def settings(
        self, *, demo: bool, values: Callable[[Catalog], ValueSource] | None = None
    ) -> Settings:
        """The options resolved for one request (every default filled in; `demo`: on
        the embedded demo database, whose fixed "now" is the default clock; `values`
        makes the value source for the resolved catalog when the options give none)."""
        deployment = resolve(self.catalog, now=self.now, demo_clock=demo)
        settings = Service(deployment).settings(self.request())
        chosen = (
            self.values if self.values is not None or values is None else values(settings.catalog)
        )
        return replace(settings, values=chosen)


_DEFAULTS = AnswerOptions()


def plan_and_answer(
    question: str,
    tenant_id: str,
    *,
    engine: Engine | None = None,
    read_engine: Engine | None = None,
    options: AnswerOptions = _DEFAULTS,
) -> AnswerResult:
    """Answer `question` for `tenant_id`, or say why not (status), never unverified.

    `engine` defaults to the embedded SQLite demo database. `read_engine` (hot
    standbys, docs/scaling.md) is where plans read, but those requiring fresh
    facts; everything else, and those, stays on `engine`, the primary.
    """
    service = Service(_resolved(options, tenant_id, engine=engine, read_engine=read_engine))
    return service.ask(question, tenant_id, options.request())


async def aplan_and_answer(
    question: str,
    tenant_id: str,
    *,
    engine: AsyncEngine | None = None,
    read_engine: AsyncEngine | None = None,
    options: AnswerOptions = _DEFAULTS,
) -> AnswerResult:
    """The asyncio twin of `plan_and_answer`, on an SQLAlchemy AsyncEngine (and
    the standbys' `read_engine`, as there).

    The pipeline's synchronous steps (reading the question, planning, the value
    index, verifying) run in a worker thread, so the event loop is never held
    by them; only the statements run on the loop, and cancelling the task
    cancels the statement in flight.
    """
    if read_engine is not None and engine is None:
        raise audited_error(
            read_engine_without_primary(),
            operation="plan_and_answer",
            tenant=tenant_id if isinstance(tenant_id, str) else None,
            sink=options.audit_sink,
        )
    service = Service(_resolved(options, tenant_id, external=engine is not None))
    return await service.aask(
        question, tenant_id, options.request(), engine=engine, read_engine=read_engine
    )


def _resolved(
    options: AnswerOptions,
    tenant_id: object,
    *,
    engine: Engine | None = None,
    external: bool = False,
    read_engine: Engine | None = None,
) -> Deployment:
    """The request's deployment; a catalog or clock that cannot be resolved is an
    error audited under the request's tenant, as any other."""
    try:
        return resolve(
            options.catalog,
            engine=engine,
            external=external,
            read_engine=read_engine,
            now=options.now,
            values=options.values,
            audit_sink=options.audit_sink,
            timeout_ms=options.timeout_ms,
        )
    except QdslError as exc:
        tenant = tenant_id if isinstance(tenant_id, str) else None
        raise audited_error(
            exc, operation="plan_and_answer", tenant=tenant, sink=options.audit_sink
        ) from None
