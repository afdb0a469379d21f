"""Run a plan against a database: `execute` (sync) and `aexecute` (asyncio).

Both drive the same I/O-free steps (`executor.flow.run_flow`) inside one
transaction. On PostgreSQL that transaction is READ ONLY, runs as the
SELECT-only role `qdsl_reader` (so row-level security applies even when the
application connects as an owner), carries the tenant in `app.tenant_id` for
the RLS policies and a `statement_timeout`; the tenant predicate is in every
statement as well, so isolation never rests on one mechanism. On SQLite a
file is read through connections made `query_only` once, when opened, beside
the caller's pool (`executor.sqlite_reader`: no pragma per call, so sqlite3
keeps its statements prepared), a bare sqlite3 connection when nobody listens
on the engine (no pool checkout, no `Connection`); a progress handler enforces the
timeout inside each statement (sync and asyncio alike), and lower() is
replaced by the deterministic `sql_lower`, PostgreSQL's lower() on a UTF-8
database (`executor.sqlite_functions`), so text compares the same on both.
"""

from __future__ import annotations

import os
import re
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.config import getenv
from qdsl.dsl.errors import DatabaseError, InternalError, UsageError
from qdsl.dsl.ir import Plan
from qdsl.dsl.limits import check_bindable, check_now, check_plan_limits, limits
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor.compile import Prepared, prepare
from qdsl.executor.driver_sql import Rows, engine_watched, raw_rows, read_rows, watched
from qdsl.executor.flow import Flow, Request, run_flow
from qdsl.executor.prepared_cache import cacheable, prepared
from qdsl.executor.result import ExecutionResult
from qdsl.executor.sqlite_functions import aregister_sqlite, register_sqlite
from qdsl.executor.sqlite_reader import READ_ONLY_INFO, Readers, holder, reader_connection, readers
from qdsl.executor.tables import catalog_key
from qdsl.facts.db import READER_ROLE, display_url
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
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

DEFAULT_TIMEOUT_MS = 5000
# A timeout bounds every statement: 0 (PostgreSQL's "no timeout") and anything
# past an hour are refused rather than passed on.
MIN_TIMEOUT_MS = 1
MAX_TIMEOUT_MS = 3_600_000
# The executor's own transaction level, whatever the caller's engine says
# (AUTOCOMMIT would end role, tenant, read-only and timeout after one statement).
# REPEATABLE READ: every statement of a plan reads the same snapshot.
_PG_ISOLATION = "REPEATABLE READ"
_SQLITE_ISOLATION = "SERIALIZABLE"


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


# -- PostgreSQL session ----------------------------------------------------------------

# Engines whose database has the reader role. Only a found role is remembered,
# so a role created later (`qdsl db upgrade`) is picked up without a restart.
_READER_READY: weakref.WeakSet[Any] = weakref.WeakSet()
_PG_ROLES = sa.table("pg_roles", sa.column("rolname", sa.Text()))
_ROLE_CHECK = (
    sa.select(sa.func.count().label("n"))
    .select_from(_PG_ROLES)
    .where(_PG_ROLES.c.rolname == sa.bindparam("role", type_=sa.Text()))
)
# TimeZone UTC: a TIMESTAMP without time zone is UTC (as qdsl's schema is), and a
# timestamp's day, a date's instant and a naive/aware comparison are all taken in
# UTC, whatever the server's or the role's default zone (executor.column_types).
_SETTINGS = sa.select(
    sa.func.set_config("app.tenant_id", sa.bindparam("tenant_id", type_=sa.Text()), True),
    sa.func.set_config("statement_timeout", sa.bindparam("timeout", type_=sa.Text()), True),
    sa.func.set_config("TimeZone", sa.bindparam("zone", type_=sa.Text()), True),
)
# set_config('role', r, true) is SET LOCAL ROLE r, and lets the role travel in
# the same round trip as the tenant and the timeout.
_SETTINGS_AS_READER = sa.select(
    sa.func.set_config("role", sa.bindparam("role", type_=sa.Text()), True),
    *_SETTINGS.selected_columns,
)
# Plans: the driver prepares a statement run often on a connection, and the
# server may then plan it once for every parameter value. Facts-first statements
# keep that generic plan: every table is reached through (tenant_id, ...) indexes,
# and a generic plan measured no worse at p95 across a 70x spread in tenant size,
# while planning each call cost ~0.8 ms. The text fallback does not: which gram
# index scan is cheap depends on the term and the tenant, so a statement of that
# role is planned for its actual parameters.
_CUSTOM_PLANS = sa.func.set_config("plan_cache_mode", "force_custom_plan", True)
_SETTINGS_CUSTOM_PLANS = _SETTINGS_AS_READER.add_columns(_CUSTOM_PLANS)
_CUSTOM_PLANS_ONLY = sa.select(_CUSTOM_PLANS)
CUSTOM_PLAN_ROLES = frozenset({"fallback"})


def _settings(
    tenant_id: str, timeout_ms: int, *, custom_plans: bool = False
) -> tuple[Any, dict[str, str]]:
    """The statement setting role, tenant and timeout (and custom plans)."""
    key = (tenant_id, timeout_ms)
    params = _SETTING_PARAMS.get(key)
    if params is None:
        # one (never changed) dict per tenant and timeout: the driver's values
        # for it are then worked out once (`DriverStatement.values`)
        if len(_SETTING_PARAMS) >= _SETTING_PARAMS_MAX:
            _SETTING_PARAMS.clear()
        params = _SETTING_PARAMS[key] = {
            "tenant_id": tenant_id,
            "timeout": str(timeout_ms),
            "role": READER_ROLE,
            "zone": "UTC",
        }
    return (_SETTINGS_CUSTOM_PLANS if custom_plans else _SETTINGS_AS_READER), params


_SETTING_PARAMS: dict[tuple[str, int], dict[str, str]] = {}
_SETTING_PARAMS_MAX = 1024


class _PgSession:
    """What runs before each request: the session settings with the first (one
    round trip; custom plans at once if that request needs them), and custom
    plans before the first fallback statement that follows facts first."""

    def __init__(self, tenant_id: str, timeout_ms: int) -> None:
        self.tenant_id = tenant_id
        self.timeout_ms = timeout_ms
        self.started = False
        self.custom = False

    def before(self, role: str) -> tuple[Any, dict[str, str]] | None:
        custom = role in CUSTOM_PLAN_ROLES and not self.custom
        self.custom = self.custom or custom
        if not self.started:
            self.started = True
            return _settings(self.tenant_id, self.timeout_ms, custom_plans=custom)
        return (_CUSTOM_PLANS_ONLY, {}) if custom else None


def _reader_missing() -> DatabaseError:
    # Fail closed: without the SELECT-only role the statements would run as the
    # connecting user, who may own the tables and so bypass row-level security.
    return DatabaseError(
        "reader_role_missing",
        f"the database has no role {READER_ROLE}, which the executor reads as",
        hint="run `qdsl db upgrade` against this database (it creates the role)",
        retryable=False,
        details={"role": READER_ROLE},
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


def _deadline_check(timeout_ms: int, state: dict[str, bool]) -> Callable[[], int]:
    deadline = time.monotonic() + timeout_ms / 1000

    def check() -> int:
        if time.monotonic() > deadline:
            state["interrupted"] = True
            return 1
        return 0

    return check


@contextmanager
def _sqlite_deadline(conn: Connection, timeout_ms: int, state: dict[str, bool]) -> Iterator[None]:
    """The timeout inside each statement: a progress handler interrupts it."""
    raw: Any = conn.connection.driver_connection
    raw.set_progress_handler(_deadline_check(timeout_ms, state), 1000)
    in_use = holder()
    if in_use is not None:
        in_use.append(raw)
    try:
        yield
    finally:
        if in_use is not None:
            in_use.remove(raw)
        raw.set_progress_handler(None, 0)


@contextmanager
def _sqlite_guard(conn: Connection, timeout_ms: int, state: dict[str, bool]) -> Iterator[None]:
    """On a connection of the caller's (an in-memory database): query_only and
    sql_lower for the call, off again before the connection goes back."""
    conn.exec_driver_sql("PRAGMA query_only = ON")
    register_sqlite(conn.connection.driver_connection)
    try:
        with _sqlite_deadline(conn, timeout_ms, state):
            yield
    finally:
        conn.exec_driver_sql("PRAGMA query_only = OFF")


def _opened_read_only(conn: Connection) -> bool:
    return bool(conn.connection.info.get(READ_ONLY_INFO))


def _drive(flow: Flow, run: Callable[[Request], Rows]) -> ExecutionResult:
    request = next(flow)
    while True:
        try:
            request = flow.send(run(request))
        except StopIteration as stop:
            result: ExecutionResult = stop.value
            return result


def read_only(conn: Connection) -> Connection:
    """Begin transactions READ ONLY on this connection: psycopg sends `BEGIN READ ONLY`
    (one round trip less than `SET TRANSACTION READ ONLY`); reset when pooled again."""
    return conn.execution_options(postgresql_readonly=True)


def own_transaction(conn: Connection) -> Connection:
    """The executor's transaction settings on `conn`, overriding the caller's engine.

    An explicit isolation level turns a connection's autocommit off for as long as
    the executor holds it (SQLAlchemy restores the engine's level when the
    connection returns to the pool), so `conn.begin()` opens a real transaction on
    every engine a caller can pass; on PostgreSQL it is also READ ONLY.
    """
    if conn.dialect.name == "postgresql":
        return conn.execution_options(isolation_level=_PG_ISOLATION, postgresql_readonly=True)
    return conn.execution_options(isolation_level=_SQLITE_ISOLATION)


def _autocommit_left(dialect: Any, dbapi_connection: Any) -> InternalError | None:
    # Fail closed: should a driver ignore the isolation level, the settings below
    # would last one statement, so nothing runs.
    if dialect.detect_autocommit_setting(dbapi_connection):
        return InternalError(
            "autocommit_connection",
            "the executor's connection is still in autocommit mode",
            hint="report this: the executor sets its own isolation level",
        )
    return None


def _pg_setup(
    conn: Connection, tenant_id: str, timeout_ms: int, *, custom_plans: bool = False
) -> None:
    """Role, tenant and timeout for this transaction, in one round trip."""
    _check_reader(conn)
    conn.execute(*_settings(tenant_id, timeout_ms, custom_plans=custom_plans))


def _check_reader(conn: Connection) -> None:
    engine = conn.engine
    if engine not in _READER_READY:
        if not conn.execute(_ROLE_CHECK, {"role": READER_ROLE}).scalar():
            raise _reader_missing()
        _READER_READY.add(engine)


def _pg_runner(conn: Connection, session: _PgSession, *, direct: bool) -> Callable[[Request], Rows]:
    def run(request: Request) -> Rows:
        if not session.started:
            _check_reader(conn)
        setting = session.before(request[0])
        if setting is not None:
            read_rows(conn, *setting, direct=direct)
        return read_rows(conn, request[1], request[2], direct=direct)

    return run


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
    state = {"interrupted": False}
    try:
        bare = _bare_readers(engine)
        if bare is not None:
            return _run_bare(bare, flow, timeout, state)
        if engine.dialect.name == "postgresql" and not engine_watched(engine):
            return _run_pg_bare(engine, flow, tenant_id, timeout)
        with _connect(engine) as conn:
            result = _run_sync(conn, flow, tenant_id, timeout, state)
    except sa_exc.SQLAlchemyError as exc:
        raise db_error(
            exc, timeout, interrupted=state["interrupted"], catalog=catalog, url=engine.url
        ) from None
    return result


def _bare_readers(engine: Engine) -> Readers | None:
    """The read-only connections of a SQLite file when nobody listens on the
    engine: the call then runs on a bare sqlite3 connection."""
    if engine.dialect.name != "sqlite" or engine_watched(engine):
        return None
    return readers(engine)


def _run_pg_bare(engine: Engine, flow: Flow, tenant_id: str, timeout: int) -> ExecutionResult:
    """A plan on a pooled psycopg connection nobody listens on, without a
    `Connection` around it: the same transaction as `own_transaction` gives
    (not autocommit, REPEATABLE READ, READ ONLY: psycopg sends them with its
    BEGIN), the same session settings and statements on its cursor, COMMIT at
    the end (see `_end`); the connection's own settings are put back before
    it returns to the pool, as SQLAlchemy resets them."""
    dialect: Any = engine.dialect  # psycopg's: set_readonly is its own
    fairy = _checkout(engine)
    raw: Any = fairy.dbapi_connection
    saved: tuple[Any, Any, Any] | None = None
    done = False
    try:
        saved = (raw.autocommit, raw.isolation_level, raw.read_only)
        dialect.set_isolation_level(raw, _PG_ISOLATION)  # autocommit off, on the driver only
        dialect.set_readonly(raw, True)
        error = _autocommit_left(dialect, raw)
        if error is not None:
            raise error
        lost = fairy.invalidate
        session = _PgSession(tenant_id, timeout)

        def run(request: Request) -> Rows:
            if not session.started and engine not in _READER_READY:
                found = raw_rows(raw, dialect, _ROLE_CHECK, {"role": READER_ROLE}, lost=lost)
                if not found.layout.getter("n")(found.data[0]):
                    raise _reader_missing()
                _READER_READY.add(engine)
            setting = session.before(request[0])
            if setting is not None:
                raw_rows(raw, dialect, *setting, lost=lost)
            return raw_rows(raw, dialect, request[1], request[2], lost=lost)

        result = _drive(flow, run)
        raw.commit()
        done = True
        return result
    except dialect.loaded_dbapi.Error as exc:
        raise _wrapped(dialect, raw, exc, fairy.invalidate) from exc
    finally:
        _give_back_pg(dialect, fairy, raw, saved, rollback=not done)


def _checkout(engine: Engine) -> Any:
    try:
        return engine.pool.connect()
    except engine.dialect.loaded_dbapi.Error as exc:
        raise sa_exc.DBAPIError.instance(
            None, None, exc, engine.dialect.loaded_dbapi.Error, dialect=engine.dialect
        ) from exc


def _wrapped(
    dialect: Any, raw: Any, exc: Exception, invalidate: Callable[[BaseException], None]
) -> sa_exc.StatementError:
    lost = bool(dialect.is_disconnect(exc, raw, None))
    if lost:
        invalidate(exc)
    return sa_exc.DBAPIError.instance(
        None, None, exc, dialect.loaded_dbapi.Error, connection_invalidated=lost, dialect=dialect
    )


def _give_back_pg(
    dialect: Any, fairy: Any, raw: Any, saved: tuple[Any, Any, Any] | None, *, rollback: bool
) -> None:
    """Roll back a failed call, put the connection's settings back, return it
    (a connection that cannot be put back is dropped, not pooled)."""
    try:
        if rollback and fairy.is_valid:
            raw.rollback()
        if saved is not None and fairy.is_valid:
            # only what the call changed (each setter is a check on the driver)
            autocommit, isolation_level, read_only = saved
            if raw.autocommit != autocommit:
                raw.autocommit = autocommit
            if raw.isolation_level != isolation_level:
                raw.isolation_level = isolation_level
            if raw.read_only != read_only:
                raw.read_only = read_only
    except dialect.loaded_dbapi.Error as exc:
        fairy.invalidate(exc)
    finally:
        fairy.close()


def _connect(engine: Engine) -> Connection:
    """The executor's connection: on a SQLite file one opened read-only
    (`executor.sqlite_reader`), else the engine's own with the executor's
    transaction settings."""
    if engine.dialect.name == "sqlite":
        found = readers(engine)
        if found is not None:
            return found.connection()
    return own_transaction(engine.connect())


def _run_bare(bare: Readers, flow: Flow, timeout: int, state: dict[str, bool]) -> ExecutionResult:
    """A plan on a leased read-only sqlite3 connection: the statements' cached
    texts on its cursor (`driver_sql.raw_rows`), the timeout by a progress
    handler. pysqlite opens no transaction for a SELECT, so there is nothing to
    begin or end; a connection a statement failed on is closed, not kept."""
    raw = bare.lease()
    dialect = bare.engine.dialect
    in_use = holder()
    if in_use is not None:
        in_use.append(raw)
    ok = False
    raw.set_progress_handler(_deadline_check(timeout, state), 1000)
    try:
        # `_drive` with the statement run in place: this is the path small
        # plans take, where a call per request shows
        request = next(flow)
        while True:
            rows = raw_rows(raw, dialect, request[1], request[2])
            try:
                request = flow.send(rows)
            except StopIteration as stop:
                result: ExecutionResult = stop.value
                break
        ok = True
    finally:
        raw.set_progress_handler(None, 0)
        if in_use is not None:
            in_use.remove(raw)
        bare.give_back(raw, reusable=ok)
    return result


def _end(tx: Any) -> None:
    """End the executor's transaction; nothing was written either way.

    PostgreSQL: COMMIT, not ROLLBACK. psycopg forgets every statement it has
    prepared on a connection at a rollback (the rollback could have undone
    objects they depend on), so rolling back each read-only transaction meant
    no statement ever stayed prepared on a pooled connection. A failed call
    still rolls back.
    """
    if tx.connection.dialect.name == "postgresql":
        tx.commit()
    else:
        tx.rollback()


def _run_sync(
    conn: Connection, flow: Flow, tenant_id: str, timeout: int, state: dict[str, bool]
) -> ExecutionResult:
    direct = not watched(conn)  # checked once per call (listeners: see driver_sql)
    if _opened_read_only(conn) and direct:
        # A read-only SQLite connection nobody listens on: pysqlite opens no
        # transaction for a SELECT, so a begin and a rollback here would only be
        # bookkeeping (the pool still rolls back when the connection returns).
        with _sqlite_deadline(conn, timeout, state):
            return _drive(flow, lambda r: read_rows(conn, r[1], r[2], direct=True))
    with conn.begin() as tx:
        if conn.dialect.name == "postgresql":
            error = _autocommit_left(conn.dialect, conn.connection.dbapi_connection)
            if error is not None:
                raise error
            result = _drive(flow, _pg_runner(conn, _PgSession(tenant_id, timeout), direct=direct))
        else:
            guard = _sqlite_deadline if _opened_read_only(conn) else _sqlite_guard
            with guard(conn, timeout, state):
                result = _drive(flow, lambda r: read_rows(conn, r[1], r[2], direct=direct))
        _end(tx)
    return result


# -- asyncio ---------------------------------------------------------------------------


async def _acheck_reader(conn: AsyncConnection) -> None:
    engine = conn.engine.sync_engine
    if engine not in _READER_READY:
        if not (await conn.execute(_ROLE_CHECK, {"role": READER_ROLE})).scalar():
            raise _reader_missing()
        _READER_READY.add(engine)


async def _adrive(
    conn: AsyncConnection,
    flow: Flow,
    deadline: float | None,
    timeout_ms: int,
    state: dict[str, bool],
    *,
    session: _PgSession | None = None,
) -> ExecutionResult:
    request = next(flow)
    while True:
        if deadline is not None and time.monotonic() > deadline:
            # between statements too: a statement may end just past the deadline
            state["interrupted"] = True
            raise _timeout(timeout_ms)
        if session is not None:
            if not session.started:
                await _acheck_reader(conn)
            setting = session.before(request[0])
            if setting is not None:
                await conn.execute(*setting)
        rows = await conn.run_sync(read_rows, request[1], request[2])
        try:
            request = flow.send(rows)
        except StopIteration as stop:
            result: ExecutionResult = stop.value
            return result


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
    state = {"interrupted": False}
    try:
        conn = await _aconnect(engine)
        try:
            result = await _arun(conn, flow, tenant_id, timeout, state)
        finally:
            await conn.close()
    except sa_exc.SQLAlchemyError as exc:
        # errors name the database by its sync URL (aiosqlite's names the same file)
        url = engine.url
        if url.get_backend_name() == "sqlite":
            url = url.set(drivername="sqlite+pysqlite")
        raise db_error(
            exc, timeout, interrupted=state["interrupted"], catalog=catalog, url=url
        ) from None
    return result


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


async def _aconnect(engine: AsyncEngine) -> AsyncConnection:
    """The asyncio twin of `_connect` (started; the caller closes it)."""
    from sqlalchemy.ext.asyncio import AsyncConnection
    from sqlalchemy.util import greenlet_spawn

    sync = engine.sync_engine
    if sync.dialect.name == "sqlite":
        found = readers(sync)
        if found is not None:
            proxied = await greenlet_spawn(reader_connection, sync, found.pool)
            return AsyncConnection(engine, proxied)
    conn = await engine.connect().start()
    if conn.dialect.name == "postgresql":
        await conn.execution_options(isolation_level=_PG_ISOLATION, postgresql_readonly=True)
    else:
        await conn.execution_options(isolation_level=_SQLITE_ISOLATION)
    return conn


async def _arun(
    conn: AsyncConnection, flow: Flow, tenant_id: str, timeout: int, state: dict[str, bool]
) -> ExecutionResult:
    async with conn.begin() as tx:
        if conn.dialect.name == "postgresql":
            raw = await conn.get_raw_connection()
            error = _autocommit_left(conn.dialect, raw.dbapi_connection)
            if error is not None:
                raise error
            session = _PgSession(tenant_id, timeout)
            result = await _adrive(conn, flow, None, timeout, state, session=session)
        else:
            aio: Any = (await conn.get_raw_connection()).driver_connection
            deadline = time.monotonic() + timeout / 1000

            def check() -> int:
                # runs on aiosqlite's worker thread, inside the statement: a
                # non-zero return interrupts it, as on the sync path
                if time.monotonic() > deadline:
                    state["interrupted"] = True
                    return 1
                return 0

            # a connection of the caller's (in-memory database): guarded for the call
            sync = conn.sync_connection
            per_call = sync is None or not _opened_read_only(sync)
            if per_call:
                await conn.exec_driver_sql("PRAGMA query_only = ON")
                await aregister_sqlite(aio)
            await aio.set_progress_handler(check, 1000)
            try:
                result = await _adrive(conn, flow, deadline, timeout, state)
            finally:
                await aio.set_progress_handler(None, 0)
                if per_call:
                    await conn.exec_driver_sql("PRAGMA query_only = OFF")
        if conn.dialect.name == "postgresql":
            await tx.commit()  # see _end
        else:
            await tx.rollback()
    return result
