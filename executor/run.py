"""Run a plan against a database: `execute` (sync) and `aexecute` (asyncio).

Both drive the same I/O-free steps (`executor.flow.run_flow`) through one
tenant session (`executor.session`), which applies the tenant guarantees
(its own read-only transaction, isolation level, reader role, tenant setting,
statement timeout) on every engine a caller can pass; the tenant predicate is
in every statement as well, so isolation never rests on one mechanism.
On SQLite lower() is replaced by the deterministic `sql_lower`, PostgreSQL's
lower() on a UTF-8 database (`executor.sqlite_functions`), so text compares
the same on both.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import DatabaseError, UsageError
from qdsl.dsl.ir import Plan
from qdsl.dsl.settings.config import getenv
from qdsl.dsl.settings.limits import check_bindable, check_now, check_plan_limits, limits
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor.compile import Prepared, prepare
from qdsl.executor.flow import Flow, run_flow
from qdsl.executor.prepared_cache import cacheable, prepared
from qdsl.executor.result import ExecutionResult
from qdsl.executor.session import atenant_session, tenant_session
from qdsl.executor.tables import catalog_key
from qdsl.facts.db import display_url
from qdsl.facts.dberrors import StatementTimeout, classify
from qdsl.facts.storage import (
    Storage,
    known_storage,
    reflect_storage,
    remember,
    storage_for,
)

if TYPE_CHECKING:
    # annotations only: importing sqlalchemy.ext.asyncio (and asyncio) costs ~70 ms,
    # which the sync path (`qdsl ask`, `execute`) should not pay
    from sqlalchemy.ext.asyncio import AsyncEngine

DEFAULT_TIMEOUT_MS = 5000
# A timeout bounds every statement: 0 (PostgreSQL's "no timeout") and anything
# past an hour are refused rather than passed on.
MIN_TIMEOUT_MS = 1
MAX_TIMEOUT_MS = 3_600_000


def _bad_timeout(where: str, raw: object, example: str) -> UsageError:
    return UsageError(
        "bad_timeout",
        f"{where} must be a whole number of milliseconds from {MIN_TIMEOUT_MS} to "
        f"{MAX_TIMEOUT_MS}, got {raw!r}",
        hint=f"for example {example}",
        retryable=False,
        details={"min": MIN_TIMEOUT_MS, "max": MAX_TIMEOUT_MS},
    )


def timeout_from_env(timeout_ms: int | None = None) -> int:
    """The explicit value, else QDSL_STATEMENT_TIMEOUT_MS, else 5000 ms; bounded."""
    if timeout_ms is not None:
        if isinstance(timeout_ms, bool) or not MIN_TIMEOUT_MS <= timeout_ms <= MAX_TIMEOUT_MS:
            raise _bad_timeout(
                "the statement timeout (--timeout-ms)", timeout_ms, "--timeout-ms 5000"
            )
        return timeout_ms
    raw = getenv("QDSL_STATEMENT_TIMEOUT_MS") or ""
    if not raw.strip():
        return DEFAULT_TIMEOUT_MS
    text = raw.strip()
    if not re.fullmatch(r"[0-9]{1,10}", text) or not (
        MIN_TIMEOUT_MS <= int(text) <= MAX_TIMEOUT_MS
    ):
        raise _bad_timeout("QDSL_STATEMENT_TIMEOUT_MS", raw, "QDSL_STATEMENT_TIMEOUT_MS=5000")
    return int(text)


# -- errors ----------------------------------------------------------------------------


def _timeout(timeout_ms: int) -> DatabaseError:
    return StatementTimeout(
        f"the query was cancelled after the statement timeout ({timeout_ms} ms)",
        hint="narrow the plan (filters, limit) or raise QDSL_STATEMENT_TIMEOUT_MS",
        details={"timeout_ms": timeout_ms},
    )


def db_error(
    exc: sa_exc.SQLAlchemyError,
    timeout_ms: int,
    *,
    interrupted: bool,
    catalog: Catalog | None = None,
    url: sa.URL | None = None,
) -> DatabaseError:
    """The typed error naming the cause (facts.dberrors), without echoing the driver's
    message (it may quote bound values) unless QDSL_DEBUG is set."""
    tables = {spec.table for spec in catalog.entities.values()} if catalog is not None else set()
    return classify(
        exc,
        where=display_url(url.render_as_string(hide_password=False)) if url else "the database",
        catalog_tables=tables,
        timeout_ms=timeout_ms,
        interrupted=interrupted,
    )


def new_execution_id() -> str:
    """`uuid.uuid4().hex`, without building a UUID object on every call: 16
    random bytes in hex, the version nibble 4 and the variant bits 10."""
    h = os.urandom(16).hex()
    return h[:12] + "4" + h[13:16] + _VARIANT[h[16]] + h[17:]


# a hex digit with its two high bits set to 10 (the RFC 4122 variant)
_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def _start(
    plan: Plan | BoundPlan,
    catalog: Catalog,
    dialect: str,
    tenant_id: str,
    now: datetime | None,
    *,
    storage: Storage | None = None,
) -> Flow:
    """The I/O-free preparation both twins share: the caller's tenant checked
    (missing, blank or malformed is a usage error), the plan's bounds, then
    `prepare`, which binds that tenant and refuses a plan bound or scoped for
    another; the bounds and `prepare` once per bound plan, caller, dialect,
    limits and `now` (`executor.prepared_cache`)."""
    lim = limits()
    tenant = valid_tenant(tenant_id, lim)
    if now is not None:
        check_now(now)

    def build() -> Prepared:
        raw = plan.plan if isinstance(plan, BoundPlan) else plan
        check_plan_limits(raw, lim)
        check_bindable(raw)
        return prepare(plan, catalog, dialect, tenant, now=now, lim=lim, storage=storage)

    if isinstance(plan, BoundPlan) and cacheable(plan, now):
        prep = prepared(
            plan,
            catalog,
            build,
            dialect=dialect,
            tenant=tenant,
            now=now,
            lim=lim,
            storage=storage,
        )
    else:
        prep = build()
    return run_flow(prep, new_execution_id())


# -- sync ------------------------------------------------------------------------------


def execute(
    plan: Plan | BoundPlan,
    catalog: Catalog,
    engine: Engine,
    tenant_id: str,
    *,
    timeout_ms: int | None = None,
    now: datetime | None = None,
) -> ExecutionResult:
    """Run a plan for `tenant_id` (bound by `normalize`, or raw and bound through it);
    the tenant is the caller's, never the plan's."""
    timeout = timeout_from_env(timeout_ms)
    storage = storage_for(engine, catalog, catalog_key(catalog))
    flow = _start(plan, catalog, engine.dialect.name, tenant_id, now, storage=storage)
    interrupted = False
    try:
        with tenant_session(engine, tenant_id, timeout) as session:
            try:
                request = next(flow)
                while True:
                    rows = session.execute(*request)
                    try:
                        request = flow.send(rows)
                    except StopIteration as stop:
                        make: Callable[[], ExecutionResult] = stop.value
                        break
            finally:
                interrupted = session.interrupted
    except sa_exc.SQLAlchemyError as exc:
        raise db_error(
            exc, timeout, interrupted=interrupted, catalog=catalog, url=engine.url
        ) from None
    # made with the connection back in the pool: a caller queued for one gets it
    # while this one builds its result
    return make()


# -- asyncio ---------------------------------------------------------------------------


async def aexecute(
    plan: Plan | BoundPlan,
    catalog: Catalog,
    engine: AsyncEngine,
    tenant_id: str,
    *,
    timeout_ms: int | None = None,
    now: datetime | None = None,
) -> ExecutionResult:
    """The asyncio twin of `execute` (psycopg async on PostgreSQL, aiosqlite on SQLite)."""
    timeout = timeout_from_env(timeout_ms)
    storage = await _astorage(engine, catalog)
    flow = _start(plan, catalog, engine.dialect.name, tenant_id, now, storage=storage)
    interrupted = False
    try:
        async with atenant_session(engine, tenant_id, timeout) as session:
            try:
                request = next(flow)
                while True:
                    if session.guarantees.progress_timeout and time.monotonic() > session.deadline:
                        # SQLite: between statements too (a statement may end just past
                        # the deadline); PostgreSQL's server times each statement
                        session.interrupted = True
                        raise _timeout(timeout)
                    rows = await session.execute(*request)
                    try:
                        request = flow.send(rows)
                    except StopIteration as stop:
                        make: Callable[[], ExecutionResult] = stop.value
                        break
            finally:
                interrupted = session.interrupted
    except sa_exc.SQLAlchemyError as exc:
        # errors name the database by its sync URL (aiosqlite's names the same file)
        url = engine.url
        if url.get_backend_name() == "sqlite":
            url = url.set(drivername="sqlite+pysqlite")
        raise db_error(exc, timeout, interrupted=interrupted, catalog=catalog, url=url) from None
    return make()


async def _astorage(engine: AsyncEngine, catalog: Catalog) -> Storage | None:
    """`storage_for` on an asyncio engine: reflected once, on a connection of its own."""
    key = catalog_key(catalog)
    found = known_storage(engine.sync_engine, key)
    if found is not None:
        return found
    try:
        async with engine.connect() as conn:
            found = await conn.run_sync(reflect_storage, catalog)
    except sa_exc.SQLAlchemyError:
        return None
    remember(engine.sync_engine, key, found)
    return found
