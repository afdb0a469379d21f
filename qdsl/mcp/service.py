"""The six operations behind the tools, for one server process.

One `Service` serves every connection of a server: one catalog, one database
(an AsyncEngine, pooled), one limit on calls in flight. The tenant is an
argument of every operation that reads tenant data, passed by the transport
(fixed at start on stdio, the bearer token's over HTTP), never by the model.

On PostgreSQL, `ask` and `run_plan` run their statements on the event loop
through the asyncio executor, so cancelling a call cancels its statement
(psycopg sends the server a cancel); everything synchronous (planning,
verifying, the ref store, compiling) runs in worker threads, bounded by the
same limit. On SQLite the whole call runs in a worker thread (the driver is
synchronous underneath; aiosqlite is a thread too, and a thread's hops cost
more than the statements): cancelling the call interrupts the statement it is
running (`sqlite3.Connection.interrupt()` on the connection the executor
reads through, `executor.sqlite_reader.connections_in_use`). A call past the
limit is refused at once with `policy/server_busy`.
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.config import getenv
from qdsl.dsl.errors import QdslError
from qdsl.mcp import errors
from qdsl.mcp.workers import Workers

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.ext.asyncio import AsyncEngine

    from qdsl.api import AnswerOptions
    from qdsl.dsl.ir import Plan
    from qdsl.envelope.settings import IoSettings

T = TypeVar("T")
Envelope = dict[str, Any]

# How long a cancelled statement may take to be cancelled before the call gives up on it.
_CANCEL_GRACE_S = 15.0


@dataclass(frozen=True)
class ServerConfig:
    """The server's settings; `db_url` and `catalog_path` as the CLI's --db / --catalog."""

    db_url: str | None = None
    catalog_path: str | None = None
    max_concurrency: int = 4
    # Statement timeout of each call (None: QDSL_STATEMENT_TIMEOUT_MS, else 5 s).
    timeout_ms: int | None = None
    # Wall-clock bound of one whole call (planning, statements, verification).
    call_timeout_s: float = 120.0


@dataclass
class Produced:
    """What an operation produced, before the envelope adapter shapes it."""

    operation: str
    data: Any
    warnings: list[str] = field(default_factory=list)
    next_ops: list[dict[str, Any]] = field(default_factory=list)
    trace_id: str | None = None


class Service:
    def __init__(self, config: ServerConfig) -> None:
        from qdsl.api import AnswerOptions
        from qdsl.dsl.catalog import resolve_catalog
        from qdsl.dsl.limits import limits
        from qdsl.envelope.backends import set_deployment_database
        from qdsl.envelope.settings import io_settings

        self.config = config
        # A postgresql ref store (QDSL_REF_STORE) keeps its refs in the database
        # this server serves, so every server process of the deployment shares them.
        set_deployment_database(config.db_url)
        self.catalog: Catalog = resolve_catalog(config.catalog_path)
        self.demo = config.db_url is None
        # Settings are read once, at start, as a CLI run reads them once: the
        # output budget and ref store settings of every result.
        self.io: IoSettings = io_settings()
        self.moment = self._fixed_now()
        self.answer_options: AnswerOptions = AnswerOptions(
            catalog=self.catalog, now=self.moment, timeout_ms=config.timeout_ms
        )
        # PostgreSQL: the async engine; SQLite: the sync one (see the module doc)
        self._engine: AsyncEngine | None = None
        self._sync: Engine | None = None
        self._running = 0
        self.limits = limits()
        # One worker per call that may run at once, and one for resources/*.
        self._workers = Workers(max(config.max_concurrency, 1) + 1)

    # ---------------------------------------------------------------- lifecycle
    def open(self) -> None:
        """Check the database exists (seed the demo one) before serving anything."""
        from sqlalchemy.engine import make_url

        from qdsl.facts.db import default_database_url, make_async_engine, make_engine
        from qdsl.facts.engines import normalize_url, require_database

        url = self.config.db_url or default_database_url()
        if self.demo:
            from qdsl.facts.demo.setup import ensure_demo

            ensure_demo(url)
        else:
            require_database(url)
        if make_url(normalize_url(url)).get_backend_name() == "sqlite":
            self._sync = make_engine(url)
        else:
            self._engine = make_async_engine(url)

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        if self._sync is not None:
            self._sync.dispose()
            self._sync = None
        self._workers.close()

    @property
    def engine(self) -> AsyncEngine:
        assert self._engine is not None, "Service.open() first"
        return self._engine

    # ------------------------------------------------------------- call limits
    @contextmanager
    def slot(self) -> Iterator[None]:
        """One call in flight; past the limit, `policy/server_busy` at once."""
        if self._running >= self.config.max_concurrency:
            raise errors.busy(self.config.max_concurrency)
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1

    async def thread(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`func` in a worker thread (in a copy of this context); a cancelled call
        waits for it to end."""
        return await self._workers.run(partial(func, *args, **kwargs))

    async def sqlite_call(self, func: Callable[[], T]) -> T:
        """`func`, which reads SQLite through the executor, in a worker thread; if
        the call is cancelled (by the client, or its time is up), the statement it
        is running is interrupted (it fails as interrupted, and `func` with it),
        again until `func` has ended, so one started meanwhile stops too."""
        from qdsl.executor.sqlite_reader import connections_in_use

        running: list[list[Any]] = []  # the executor's list of the call's connections

        def call() -> T:
            with connections_in_use() as holder:
                running.append(holder)
                return func()

        def interrupt() -> None:
            for holder in running:
                for raw in list(holder):
                    # still this call's (the executor takes it out of the list before
                    # it gives the connection back)
                    if raw in holder:
                        raw.interrupt()

        return await self._workers.run(call, on_cancel=interrupt)

    def _fixed_now(self) -> datetime | None:
        """QDSL_NOW, else the demo's fixed clock on the demo database, else None (the clock)."""
        from qdsl.cli.exec_cmds import parse_now

        moment = parse_now(getenv("QDSL_NOW"))
        if moment is None and self.demo:
            from qdsl.facts.demo import DEMO_NOW

            return DEMO_NOW
        return moment

    # -------------------------------------------------------------- operations
    # Each returns the envelope (see `shaped`); synchronous work, the shaping
    # included, runs in one worker-thread call where it can.

    async def ask(self, tenant: str, question: str) -> Envelope:
        from qdsl.api import aplan_and_answer, plan_and_answer
        from qdsl.dsl.limits import check_text_size

        check_text_size(question, "input_bytes", "the question", self.limits)
        options = self.answer_options
        sync = self._sync
        if sync is not None:
            return await self.sqlite_call(
                lambda: self.shaped(
                    _answered(plan_and_answer(question, tenant, engine=sync, options=options)),
                    tenant,
                )
            )
        res = await cancellable(
            aplan_and_answer(question, tenant, engine=self.engine, options=options)
        )
        return await self.thread(self.shaped, _answered(res), tenant)

    async def run_plan(self, tenant: str, plan_input: str | dict[str, Any]) -> Envelope:
        from qdsl.executor.run import aexecute, execute

        moment = self.moment or datetime.now(UTC)
        timeout = self.config.timeout_ms
        sync = self._sync

        def verified(plan: Plan, result: Any, warnings: list[str]) -> Envelope:
            data = _verified(plan, result, tenant, self.catalog, moment)
            return self.shaped(
                Produced("run", data, warnings, _status_next(data), data.get("trace_id")), tenant
            )

        def whole() -> Envelope:
            try:
                plan, warnings = self._normalized(plan_input, tenant)
                assert sync is not None
                result = execute(plan, self.catalog, sync, tenant, timeout_ms=timeout, now=moment)
            except QdslError as exc:
                _audit_failure(tenant, exc)
                raise
            return verified(plan, result, warnings)

        if sync is not None:
            return await self.sqlite_call(whole)
        try:
            plan, warnings = await self.thread(self._normalized, plan_input, tenant)
            result = await cancellable(
                aexecute(plan, self.catalog, self.engine, tenant, timeout_ms=timeout, now=moment)
            )
        except QdslError as exc:
            await self.thread(_audit_failure, tenant, exc)
            raise
        return await self.thread(verified, plan, result, warnings)

    async def compile_plan(
        self, tenant: str, plan_input: str | dict[str, Any], dialect: str
    ) -> Envelope:
        def body() -> Envelope:
            from qdsl.executor.compile import compile_plan

            plan, warnings = self._normalized(plan_input, tenant)
            compiled = compile_plan(plan, self.catalog, dialect, tenant_id=tenant)
            return self.shaped(Produced("compile", compiled.to_dict(), warnings), tenant)

        return await self.thread(body)

    async def describe_catalog(self, tenant: str, entity: str | None) -> Envelope:
        from qdsl.catalog_view import describe_catalog

        return await self.thread(
            lambda: self.shaped(Produced("catalog", describe_catalog(self.catalog, entity)), tenant)
        )

    async def plan_schema(self, tenant: str) -> Envelope:
        from qdsl.dsl.schema import plan_json_schema

        return await self.thread(
            lambda: self.shaped(Produced("schema", plan_json_schema()), tenant)
        )

    async def get_ref(self, tenant: str, ref_id: str, expr: str) -> Envelope:
        def body() -> Envelope:
            from qdsl.envelope.jmes import search
            from qdsl.envelope.ref_api import result_room
            from qdsl.envelope.store import open_store

            store = open_store()
            record, document = store.load_json(ref_id, tenant=tenant)
            # what is read may be stored again for the tenant (over the output budget)
            value = search(
                expr, document, document_bytes=record.bytes, store_bytes=result_room(store)
            )
            warnings = [] if value is not None else [f"{expr!r} selects nothing in {ref_id}"]
            data = {
                "refId": record.ref_id,
                "expr": expr,
                "value": value,
                "sha256": record.sha256,
                "bytes": record.bytes,
            }
            return self.shaped(Produced("refs get", data, warnings), tenant)

        return await self.thread(body)

    def shaped(self, produced: Produced, tenant: str) -> Envelope:
        """The envelope the CLI prints for `produced` with --json, as an object: over
        the output budget, the full envelope is stored for `tenant` first and the
        preview led by `refId` is returned (docs/envelopes.md). Blocking (the store)."""
        from qdsl.envelope.emit import emit_success

        out = io.StringIO()
        emit_success(
            produced.operation,
            produced.data,
            warnings=produced.warnings,
            next_ops=produced.next_ops,
            trace_id=produced.trace_id,
            json_mode=True,
            out=out,
            settings=self.io,
            tenant=tenant,
        )
        shaped: dict[str, Any] = json.loads(out.getvalue())
        return shaped

    def _normalized(self, plan_input: str | dict[str, Any], tenant: str) -> tuple[Plan, list[str]]:
        from qdsl.dsl.load import load_plan
        from qdsl.dsl.normalize import PlanContext, normalize

        source = plan_input if isinstance(plan_input, str) else json.dumps(plan_input)
        result = normalize(
            load_plan(source.removeprefix("\ufeff")), self.catalog, PlanContext(tenant_id=tenant)
        )
        return result.plan, list(result.warnings)


async def cancellable(awaitable: Awaitable[T]) -> T:
    """Run `awaitable` as its own asyncio task; if the call is cancelled, cancel the
    task once and wait (shielded, bounded) for it to end.

    anyio cancels level-triggered: every await in a cancelled scope is cancelled
    again, so the driver's own clean-up (psycopg sending the server a cancel for
    the statement in flight, SQLAlchemy returning the connection) could not run
    inside the call's scope. In its own task it runs to the end.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        return await asyncio.shield(task)
    except BaseException:
        if not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_GRACE_S):
                await asyncio.wait([task])
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the call's own error is what propagates
        raise


def _status_next(data: dict[str, Any]) -> list[dict[str, Any]]:
    """After a list, the status plan of its first item (the CLI's `meta.next`)."""
    from qdsl.envelope.next_ops import status_of_first_item

    answer, plan = data.get("answer"), data.get("plan")
    if data.get("answer_contract") != "entity_list":
        return []
    if not isinstance(answer, dict) or not isinstance(plan, dict):
        return []
    items = answer.get("items")
    return status_of_first_item(
        list(items) if isinstance(items, list) else [], str(plan.get("entity_type")), None
    )


def _verified(
    plan: Plan, result: Any, tenant: str, catalog: Catalog, moment: datetime
) -> dict[str, Any]:
    """`qdsl run`'s data: the verified answer, the signed result, the plan, `now`."""
    from qdsl.cli.answer_cmds import verified_run
    from qdsl.result_mac import sign_result

    answer, _exit = verified_run(plan, result, tenant_id=tenant, catalog=catalog, now=moment)
    printed = result.model_dump(mode="json")
    printed["mac"] = sign_result(tenant, printed)
    return {**answer, "result": printed, "plan": plan.to_json_dict(), "now": moment.isoformat()}


def _audit_failure(tenant: str, exc: QdslError) -> None:
    """A plan that failed before it was answered is audited, as `qdsl run` does."""
    from qdsl.audit import Audit

    audit = Audit(uuid.uuid4().hex)
    audit.begin(tenant, None)
    audit.failed(exc)


def _answered(res: Any) -> Produced:
    data = res.to_dict()
    return Produced("ask", data, list(res.warnings), _status_next(data), data.get("trace_id"))
