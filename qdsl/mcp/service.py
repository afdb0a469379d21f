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
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.mcp import errors
from qdsl.mcp.workers import Workers

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.ext.asyncio import AsyncEngine

    from qdsl.deployment import Deployment
    from qdsl.envelope.settings import IoSettings
    from qdsl.service import Ran

T = TypeVar("T")
Envelope = dict[str, Any]

# How long a cancelled statement may take to be cancelled before the call gives up on it.
_CANCEL_GRACE_S = 15.0


@dataclass(frozen=True)
class ServerConfig:
    """The server's settings; `db_url` and `catalog_path` as the CLI's --db / --catalog."""

    db_url: str | None = None
    catalog_path: str | None = None
    # where plans read (the CLI's --read-db, hot standbys; docs/scaling.md)
    read_url: str | None = None
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
        from qdsl.deployment import resolve
        from qdsl.dsl.settings.limits import limits
        from qdsl.envelope.backends import set_deployment_database
        from qdsl.envelope.settings import io_settings
        from qdsl.service import Service as Operations

        self.config = config
        # A postgresql ref store (QDSL_REF_STORE) keeps its refs in the database
        # this server serves, so every server process of the deployment shares them.
        set_deployment_database(config.db_url)
        # One deployment for the process: QDSL_NOW, else the demo's fixed clock on
        # the demo database, else the wall clock at each call.
        self.deployment: Deployment = resolve(
            config.catalog_path,
            config.db_url,
            env_now=True,
            limits=limits(),
            timeout_ms=config.timeout_ms,
            read_url=config.read_url,
        )
        self.ops = Operations(self.deployment)
        self.catalog: Catalog = self.deployment.catalog
        # Settings are read once, at start, as a CLI run reads them once: the
        # output budget and ref store settings of every result.
        self.io: IoSettings = io_settings()
        # PostgreSQL: the async engine; SQLite: the sync one (see the module doc)
        self._engine: AsyncEngine | None = None
        self._reader: AsyncEngine | None = None  # on the read URL, when there is one
        self._sync: Engine | None = None
        self._running = 0
        self.limits = self.deployment.limits
        # One worker per call that may run at once, and one for resources/*.
        self._workers = Workers(max(config.max_concurrency, 1) + 1)

    # ---------------------------------------------------------------- lifecycle
    def open(self) -> None:
        """Check the database exists (seed the demo one) before serving anything."""
        from sqlalchemy.engine import make_url

        from qdsl.facts.engines import normalize_url, require_database

        d = self.deployment
        url = d.database()
        if not d.demo:
            require_database(url)
        if make_url(normalize_url(url)).get_backend_name() == "sqlite":
            self._sync = d.engine()  # the demo's is seeded as it is made
        else:
            if d.demo:
                d.engine()  # seeds the demo database
            self._engine = d.async_engine()
            self._reader = d.async_read_engine()

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        if self._reader is not None:
            await self._reader.dispose()
            self._reader = None
        if self._sync is not None:
            self.deployment.close()
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

    # -------------------------------------------------------------- operations
    # Each returns the envelope (see `shaped`); synchronous work, the shaping
    # included, runs in one worker-thread call where it can.

    async def ask(self, tenant: str, question: str) -> Envelope:
        from qdsl.dsl.settings.limits import check_text_size

        check_text_size(question, "input_bytes", "the question", self.limits)
        if self._sync is not None:
            return await self.sqlite_call(
                lambda: self.shaped(_answered(self.ops.ask(question, tenant)), tenant)
            )
        res = await cancellable(
            self.ops.aask(question, tenant, engine=self.engine, read_engine=self._reader)
        )
        return await self.thread(self.shaped, _answered(res), tenant)

    async def run_plan(self, tenant: str, plan_input: str | dict[str, Any]) -> Envelope:
        source = _source(plan_input)

        def shaped(ran: Ran) -> Envelope:
            data = ran.data()
            produced = Produced("run", data, ran.warnings, _status_next(data), data["trace_id"])
            return self.shaped(produced, tenant)

        if self._sync is not None:
            return await self.sqlite_call(lambda: shaped(self.ops.run(source, tenant)))
        ops = self.ops
        try:
            norm = await self.thread(ops.normalized, source, tenant)
            moment = self.deployment.now()
            from qdsl.service import requires_fresh

            # a plan requiring fresh facts reads the primary (a standby may lag)
            reader = self._reader
            if reader is None or requires_fresh(norm.plan):
                reader = self.engine
            result = await cancellable(ops.aexecute(norm, tenant, reader, moment))
        except QdslError as exc:
            raise await self.thread(ops.audited, exc, tenant, "run") from None
        ran = await self.thread(ops.answered, norm, result, tenant, moment)
        return await self.thread(shaped, ran)

    async def compile_plan(
        self, tenant: str, plan_input: str | dict[str, Any], dialect: str
    ) -> Envelope:
        def body() -> Envelope:
            _plan, compiled, warnings = self.ops.compile(_source(plan_input), tenant, dialect)
            return self.shaped(Produced("compile", compiled.to_dict(), warnings), tenant)

        return await self.thread(body)

    async def describe_catalog(self, tenant: str, entity: str | None) -> Envelope:
        from qdsl.catalog_view import describe_catalog

        return await self.thread(
            lambda: self.shaped(Produced("catalog", describe_catalog(self.catalog, entity)), tenant)
        )

    async def plan_schema(self, tenant: str) -> Envelope:
        from qdsl.dsl.plan.schema import plan_json_schema

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


def _source(plan_input: str | dict[str, Any]) -> str:
    """A plan argument as the plan reader takes it: text (less a BOM), or JSON text."""
    return (
        plan_input.removeprefix("\ufeff") if isinstance(plan_input, str) else json.dumps(plan_input)
    )


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


def _answered(res: Any) -> Produced:
    data = res.to_dict()
    return Produced("ask", data, list(res.warnings), _status_next(data), data.get("trace_id"))
