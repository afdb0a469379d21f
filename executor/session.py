"""The one tenant session every statement of the executor runs through.

`tenant_session` (sync) and `atenant_session` (asyncio) open a connection for
the caller's engine, whatever it is configured for (default, AUTOCOMMIT,
NullPool; SQLite or PostgreSQL), and apply the tenant guarantees of one table,
`GUARANTEES`, shared by both twins, before any statement of a plan runs:

* its own transaction: an explicit isolation level (`execution_options`)
  turns AUTOCOMMIT off while the session holds the connection (SQLAlchemy
  restores the engine's level at check-in), so every setting lasts the whole
  plan; REPEATABLE READ on PostgreSQL: one snapshot for every statement;
* read only: PostgreSQL's transaction is READ ONLY (sent with psycopg's
  BEGIN); a SQLite file is read through connections made `query_only` when
  opened (`executor.sqlite_pool`), an in-memory one `query_only` for the call;
* the reader role (SET LOCAL ROLE qdsl_reader, so row-level security applies
  even to an owner; a database without it is `database/reader_role_missing`),
  the tenant (`app.tenant_id`) and the statement timeout, as bound values of
  one `SELECT set_config(...)` before the first statement (PostgreSQL); on
  SQLite a progress handler interrupts a statement past its deadline.

The transaction ends with COMMIT on PostgreSQL (nothing was written, and
psycopg forgets its prepared statements at a ROLLBACK), a rollback on SQLite.
Statements run with `Connection.execute(stmt, params)` only: SQLAlchemy's
compiled cache serves the statement sets `executor.statements` keeps per shape.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from qdsl.dsl.errors import DatabaseError, InternalError
from qdsl.executor.rows import Rows, layout_of
from qdsl.executor.sqlite_functions import aregister_sqlite, register_sqlite
from qdsl.executor.sqlite_pool import reader_connection, reader_pool
from qdsl.executor.sqlite_reader import holder
from qdsl.facts.db import READER_ROLE
from qdsl.facts.fair_checkout import turn

if TYPE_CHECKING:
    # annotations only: importing sqlalchemy.ext.asyncio costs the sync path ~70 ms
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


@dataclass(frozen=True)
class Guarantees:
    """What a dialect's session sets before a plan's first statement and undoes after."""

    # execution options of a connection of the caller's pool: its own transaction
    options: Mapping[str, Any]
    # run once on each connection the executor opens itself, when opened
    # (SQLite files: `executor.sqlite_pool`); such a connection takes no options
    opened: tuple[str, ...] = ()
    # per call around the transaction, on a connection of the caller's (SQLite in memory)
    on: tuple[sa.TextClause, ...] = ()
    off: tuple[sa.TextClause, ...] = ()
    # reader role, tenant and timeout set in the transaction (PostgreSQL); they
    # would last one statement in autocommit, so a connection left in it is refused
    settings: bool = False
    progress_timeout: bool = False  # the timeout by a progress handler (SQLite)
    commit: bool = False  # end with COMMIT (else rollback)


GUARANTEES: Mapping[str, Guarantees] = {
    "postgresql": Guarantees(
        options={"isolation_level": "REPEATABLE READ", "postgresql_readonly": True},
        settings=True,
        commit=True,
    ),
    "sqlite": Guarantees(
        options={"isolation_level": "SERIALIZABLE"},
        opened=("PRAGMA query_only = ON",),
        on=(sa.text("PRAGMA query_only = ON"),),
        off=(sa.text("PRAGMA query_only = OFF"),),
        progress_timeout=True,
    ),
}


# -- PostgreSQL settings ----------------------------------------------------------------

# Engines whose database has the reader role. Only a found role is remembered,
# so a role created later (`qdsl db upgrade`) is picked up without a restart.
_READER_READY: weakref.WeakSet[Any] = weakref.WeakSet()
_PG_ROLES = sa.table("pg_roles", sa.column("rolname", sa.Text()))
_ROLE_CHECK = (
    sa.select(sa.func.count().label("n"))
    .select_from(_PG_ROLES)
    .where(_PG_ROLES.c.rolname == sa.bindparam("role", type_=sa.Text()))
)
# set_config('role', r, true) is SET LOCAL ROLE r, in the same round trip as the
# tenant and the timeout. TimeZone UTC: a TIMESTAMP without time zone is UTC (as
# qdsl's schema is), whatever the server's or the role's default zone.
_SETTINGS = sa.select(
    sa.func.set_config("role", sa.bindparam("role", type_=sa.Text()), True),
    sa.func.set_config("app.tenant_id", sa.bindparam("tenant_id", type_=sa.Text()), True),
    sa.func.set_config("statement_timeout", sa.bindparam("timeout", type_=sa.Text()), True),
    sa.func.set_config("TimeZone", sa.bindparam("zone", type_=sa.Text()), True),
)
# Facts-first statements keep the server's generic plans (every table is reached
# through (tenant_id, ...) indexes); the text fallback's is planned for its actual
# parameters: which gram index scan is cheap depends on the term and the tenant.
_CUSTOM_PLANS = sa.func.set_config("plan_cache_mode", "force_custom_plan", True)
_SETTINGS_CUSTOM_PLANS = _SETTINGS.add_columns(_CUSTOM_PLANS)
_CUSTOM_PLANS_ONLY = sa.select(_CUSTOM_PLANS)
CUSTOM_PLAN_ROLES = frozenset({"fallback"})


def reader_missing() -> DatabaseError:
    # Fail closed: without the SELECT-only role the statements would run as the
    # connecting user, who may own the tables and so bypass row-level security.
    return DatabaseError(
        "reader_role_missing",
        f"the database has no role {READER_ROLE}, which the executor reads as",
        hint="run `qdsl db upgrade` against this database (it creates the role)",
        retryable=False,
        details={"role": READER_ROLE},
    )


def autocommit_left(dialect: Any, dbapi_connection: Any) -> InternalError | None:
    # Fail closed: should a driver ignore the isolation level, the settings would
    # last one statement, so nothing runs.
    if dialect.detect_autocommit_setting(dbapi_connection):
        return InternalError(
            "autocommit_connection",
            "the executor's connection is still in autocommit mode",
            hint="report this: the executor sets its own isolation level",
        )
    return None


class _Settings:
    """The PostgreSQL settings a plan's requests need, in order: role, tenant,
    timeout (and custom plans if the first request needs them) before the first;
    custom plans before the first fallback statement that follows."""

    def __init__(self, tenant_id: str, timeout_ms: int) -> None:
        timeout = str(timeout_ms)
        self.params = {
            "role": READER_ROLE,
            "tenant_id": tenant_id,
            "timeout": timeout,
            "zone": "UTC",
        }
        self.started = False
        self.custom = False

    def before(self, role: str) -> tuple[Any, dict[str, str]] | None:
        custom = role in CUSTOM_PLAN_ROLES and not self.custom
        self.custom = self.custom or custom
        if not self.started:
            self.started = True
            return (_SETTINGS_CUSTOM_PLANS if custom else _SETTINGS), self.params
        return (_CUSTOM_PLANS_ONLY, {}) if custom else None


def _rows(result: sa.CursorResult[Any]) -> Rows:
    return Rows(layout_of(tuple(result.keys())), result.all())


def _deadline_check(session: _Base) -> Callable[[], int]:
    deadline = session.deadline

    def check() -> int:
        # inside the statement (on aiosqlite's worker thread too): non-zero interrupts it
        if time.monotonic() > deadline:
            session.interrupted = True
            return 1
        return 0

    return check


# `info` of a pooled DBAPI connection (kept while it lives): sql_lower is installed
# on it (once per connection)
_LOWER_INFO = "qdsl_sql_lower"


class _Base:
    def __init__(self, dialect: str, tenant_id: str, timeout_ms: int) -> None:
        self.guarantees = GUARANTEES[dialect]
        self.timeout_ms = timeout_ms
        self.deadline = time.monotonic() + timeout_ms / 1000
        self.interrupted = False
        self.settings = _Settings(tenant_id, timeout_ms) if self.guarantees.settings else None


class TenantSession(_Base):
    """A plan's statements on one connection, inside the tenant guarantees."""

    def __init__(self, conn: Connection, tenant_id: str, timeout_ms: int) -> None:
        super().__init__(conn.dialect.name, tenant_id, timeout_ms)
        self.connection = conn

    def execute(self, role: str, stmt: Any, params: Mapping[str, Any]) -> Rows:
        """`stmt`'s rows, after the settings this request needs."""
        conn = self.connection
        settings = self.settings
        if settings is not None:
            if not settings.started:
                _check_reader(conn)
            setting = settings.before(role)
            if setting is not None:
                conn.execute(*setting)
        return _rows(conn.execute(stmt, params))


def _check_reader(conn: Connection) -> None:
    if conn.engine not in _READER_READY:
        _reader_found(conn.engine, conn.execute(_ROLE_CHECK, {"role": READER_ROLE}).scalar())


def _reader_found(engine: Any, found: Any) -> None:
    if not found:
        raise reader_missing()
    _READER_READY.add(engine)


@contextmanager
def tenant_session(engine: Engine, tenant_id: str, timeout_ms: int) -> Iterator[TenantSession]:
    """A session on a connection of `engine`; ends the transaction (nothing was
    written) and undoes the per-call settings before the connection goes back."""
    g = GUARANTEES[engine.dialect.name]
    with turn(engine):
        yield from _session(engine, g, tenant_id, timeout_ms)


def _session(
    engine: Engine, g: Guarantees, tenant_id: str, timeout_ms: int
) -> Iterator[TenantSession]:
    conn, opened = _connect(engine)
    with conn:
        if g.settings:
            error = autocommit_left(conn.dialect, conn.connection.dbapi_connection)
            if error is not None:
                raise error
        session = TenantSession(conn, tenant_id, timeout_ms)
        per_call = () if opened else g.off
        with conn.begin() as tx:
            if not opened:
                for stmt in g.on:
                    conn.execute(stmt)
            try:
                with _sqlite_guard(session):
                    yield session
            finally:
                # the caller's connection is writable again, whatever happened
                for stmt in per_call:
                    if conn.connection.is_valid:
                        conn.execute(stmt)
            _end(tx, g)


def _end(tx: Any, g: Guarantees) -> None:
    """COMMIT on PostgreSQL, not ROLLBACK: psycopg forgets every statement it
    prepared on a connection at a rollback, so none would stay prepared on a
    pooled connection (a failed call still rolls back, by the context manager)."""
    if g.commit:
        tx.commit()
    else:
        tx.rollback()


def sqlite_opened(dbapi_connection: Any, record: Any) -> None:
    """A connection the executor opened on a SQLite file: read-only and given
    sql_lower for as long as it lives (no pragma per call)."""
    cursor = dbapi_connection.cursor()
    try:
        for statement in GUARANTEES["sqlite"].opened:
            cursor.execute(statement)
    finally:
        cursor.close()
    register_sqlite(dbapi_connection)
    record.info[_LOWER_INFO] = True


def _connect(engine: Engine) -> tuple[Connection, bool]:
    """The session's connection, and whether the executor opened it read-only:
    on a SQLite file one of the pool beside the caller's, else the caller's own
    with the session's options."""
    g = GUARANTEES[engine.dialect.name]
    if g.opened:
        pool = reader_pool(engine, sqlite_opened)
        if pool is not None:
            return reader_connection(engine, pool), True
    conn = engine.connect()
    conn.execution_options(**g.options)
    return conn, False


@contextmanager
def _sqlite_guard(session: TenantSession) -> Iterator[None]:
    """sql_lower and the timeout's progress handler on the driver connection;
    the connection is listed in the context's `connections_in_use` meanwhile."""
    if not session.guarantees.progress_timeout:
        yield
        return
    proxied = session.connection.connection
    raw: Any = proxied.driver_connection
    if not proxied.info.get(_LOWER_INFO):
        register_sqlite(raw)
        proxied.info[_LOWER_INFO] = True
    raw.set_progress_handler(_deadline_check(session), 1000)
    in_use = holder()
    if in_use is not None:
        in_use.append(raw)
    try:
        yield
    finally:
        if in_use is not None:
            in_use.remove(raw)
        raw.set_progress_handler(None, 0)


# -- asyncio ---------------------------------------------------------------------------


class AsyncTenantSession(_Base):
    """The asyncio twin of `TenantSession`."""

    def __init__(self, conn: AsyncConnection, tenant_id: str, timeout_ms: int) -> None:
        super().__init__(conn.dialect.name, tenant_id, timeout_ms)
        self.connection = conn

    async def execute(self, role: str, stmt: Any, params: Mapping[str, Any]) -> Rows:
        conn = self.connection
        settings = self.settings
        if settings is not None:
            if not settings.started:
                await _acheck_reader(conn)
            setting = settings.before(role)
            if setting is not None:
                await conn.execute(*setting)
        return _rows(await conn.execute(stmt, params))


async def _acheck_reader(conn: AsyncConnection) -> None:
    engine = conn.engine.sync_engine
    if engine not in _READER_READY:
        _reader_found(engine, (await conn.execute(_ROLE_CHECK, {"role": READER_ROLE})).scalar())


async def _aconnect(engine: AsyncEngine) -> tuple[AsyncConnection, bool]:
    """The asyncio twin of `_connect` (started; the caller closes it)."""
    from sqlalchemy.ext.asyncio import AsyncConnection
    from sqlalchemy.util import greenlet_spawn

    g = GUARANTEES[engine.dialect.name]
    if g.opened:
        sync = engine.sync_engine
        pool = reader_pool(sync, sqlite_opened)
        if pool is not None:
            return AsyncConnection(
                engine, await greenlet_spawn(reader_connection, sync, pool)
            ), True
    conn = await engine.connect()
    await conn.execution_options(**g.options)
    return conn, False


@asynccontextmanager
async def atenant_session(
    engine: AsyncEngine, tenant_id: str, timeout_ms: int
) -> AsyncIterator[AsyncTenantSession]:
    """The asyncio twin of `tenant_session`."""
    g = GUARANTEES[engine.dialect.name]
    conn, opened = await _aconnect(engine)
    try:
        proxied = await conn.get_raw_connection()
        if g.settings:
            error = autocommit_left(conn.dialect, proxied.dbapi_connection)
            if error is not None:
                raise error
        session = AsyncTenantSession(conn, tenant_id, timeout_ms)
        per_call = () if opened else g.off
        async with conn.begin() as tx:
            if not opened:
                for stmt in g.on:
                    await conn.execute(stmt)
            aio: Any = proxied.driver_connection
            try:
                if g.progress_timeout:
                    if not proxied.info.get(_LOWER_INFO):
                        await aregister_sqlite(aio)
                        proxied.info[_LOWER_INFO] = True
                    await aio.set_progress_handler(_deadline_check(session), 1000)
                yield session
            finally:
                if proxied.is_valid:
                    if g.progress_timeout:
                        await aio.set_progress_handler(None, 0)
                    for stmt in per_call:
                        await conn.execute(stmt)
            if g.commit:
                await tx.commit()
            else:
                await tx.rollback()
    finally:
        await conn.close()
