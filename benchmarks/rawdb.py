"""The raw drivers qdsl's executor is held against, on the exact SQL it ran.

`capture` records every statement qdsl sends through SQLAlchemy to the driver
(the SQL text and the parameters as the driver receives them); `queries`
drops the session set-up (settings, role check, pragmas), leaving the
statements that read data. The raw runners replay those with sqlite3, or with
psycopg prepared (`prepare=True`), optionally inside the same session guards
the executor sets on PostgreSQL: a READ ONLY, REPEATABLE READ transaction, the
SELECT-only role (so row-level security applies), the tenant setting the RLS
policies read and a statement timeout, in one round trip.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import sqlalchemy as sa

from qdsl.executor.sqlite_functions import register_sqlite
from qdsl.facts.db import READER_ROLE

Statement = tuple[str, Any]

_SETUP = ("set_config(", "pg_roles", "PRAGMA ")


@contextmanager
def capture(engine: sa.Engine) -> Iterator[list[Statement]]:
    seen: list[Statement] = []

    def hook(
        _conn: Any, _cursor: Any, statement: str, parameters: Any, _ctx: Any, _many: bool
    ) -> None:
        seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", hook)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", hook)


def queries(seen: list[Statement]) -> list[Statement]:
    return [(sql, params) for sql, params in seen if not any(m in sql for m in _SETUP)]


def captured(engine: sa.Engine, run: Callable[[], object]) -> list[Statement]:
    """The statements `run` reads data with, as the driver received them."""
    with capture(engine) as seen:
        run()
    found = queries(seen)
    if not found:
        raise RuntimeError("qdsl ran no statement through SQLAlchemy: nothing to replay")
    return found


# -- SQLite ------------------------------------------------------------------------------


def sqlite_connect(path: str) -> sqlite3.Connection:
    """A read-only sqlite3 connection with qdsl's SQL functions (its SQL calls them)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    register_sqlite(conn)
    return conn


def sqlite_run(conn: sqlite3.Connection, statements: list[Statement]) -> int:
    rows = 0
    for sql, params in statements:
        rows += len(conn.execute(sql, params).fetchall())
    return rows


# -- PostgreSQL --------------------------------------------------------------------------

GUARDS = (
    "SELECT set_config('role', %s, true), set_config('app.tenant_id', %s, true), "
    "set_config('statement_timeout', %s, true)"
)


def conninfo(url: str) -> str:
    parsed = sa.make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


def pg_connect(url: str, *, guarded: bool) -> psycopg.Connection[Any]:
    conn = psycopg.connect(conninfo(url), autocommit=not guarded)
    if guarded:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    return conn


def pg_run(
    conn: psycopg.Connection[Any], statements: list[Statement], *, prepare: bool = True
) -> int:
    """`statements` run, prepared server-side unless `prepare` is off (behind a
    transaction pooler that keeps no prepared statements)."""
    rows = 0
    for sql, params in statements:
        rows += len(conn.execute(sql, params, prepare=prepare).fetchall())
    return rows


def pg_run_guarded(
    conn: psycopg.Connection[Any],
    tenant: str,
    statements: list[Statement],
    timeout_ms: int,
    *,
    prepare: bool = True,
) -> int:
    """The same statements inside the executor's session guards, one transaction.

    It ends with COMMIT (nothing was written: the same as a rollback) because
    psycopg deallocates every prepared statement of the session on ROLLBACK."""
    conn.execute(GUARDS, (READER_ROLE, tenant, str(timeout_ms)), prepare=prepare)
    rows = pg_run(conn, statements, prepare=prepare)
    conn.commit()
    return rows
