"""The database session of one facts load: bounded in time, and stopped with its loader.

A load of a large file runs for minutes. PostgreSQL must not go on running
its statements after the loader gave up, was interrupted or died (an
`UPDATE semantic_facts` was seen running five minutes after its loader was
killed). Inside the load's transaction on PostgreSQL, `prepare_session` sets
(all transaction-local, so a pooled connection gets its settings back):

* `statement_timeout`: QDSL_LOAD_STATEMENT_TIMEOUT_MS, default 600,000 ms
  (10 minutes) per statement: a reload of a million rows takes well under a
  minute, so only a stuck statement (a lock held elsewhere) reaches it;
* `client_connection_check_interval` (PostgreSQL 14 and later): while a
  statement runs, or waits for a lock, the server checks every 2 s whether
  the client's socket is still open, and ends the session when it is not.
  This is what stops the statement of a loader killed with SIGKILL;
* `tcp_keepalives_idle` / `_interval` / `_count` (60 s, 10 s, 6): a client
  whose host vanished without closing the connection is dropped after about
  two minutes of silence, where the operating system's default waits hours;
* `application_name` = "qdsl facts load", so an operator can find the load in
  `pg_stat_activity`.

Before the load's transaction, `refresh_statistics(engine)` ANALYZEs
semantic_facts when it changed by more than a tenth since its statistics were
taken (autovacuum's own rule, which autovacuum applies only up to a minute
later): the upsert's joins are planned from them, and a reload right after a
first load of a million rows was otherwise planned for an empty table, as
nested loops. It runs on its own connection, so its lock on the table is
held for the ANALYZE alone, not for the whole load.

`cancel_on_signals()` turns SIGINT and SIGTERM into LoadInterrupted for the
duration of a load (main thread only), after sending PostgreSQL a cancel
request for the running statement (psycopg's `cancel_safe`): the statement
stops on the server, the transaction rolls back, the loader exits. SQLite
runs in the loader's own process, so a killed loader stops it too.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.dialects.postgresql import REGCLASS

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.config import getenv
from qdsl.facts.dberrors import StatementTimeout
from qdsl.facts.tables import semantic_facts

__all__ = [
    "APPLICATION_NAME",
    "DEFAULT_LOAD_TIMEOUT_MS",
    "LOAD_TIMEOUT_ENV",
    "LoadInterrupted",
    "cancel_on_signals",
    "load_timeout",
    "load_timeout_ms",
    "prepare_session",
    "refresh_statistics",
]

LOAD_TIMEOUT_ENV = "QDSL_LOAD_STATEMENT_TIMEOUT_MS"
DEFAULT_LOAD_TIMEOUT_MS = 600_000
_MAX_TIMEOUT_MS = 86_400_000  # a day
APPLICATION_NAME = "qdsl facts load"
CHECK_INTERVAL_MS = 2000
_KEEPALIVES = (("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"),
               ("tcp_keepalives_count", "6"))
_STOPPING = (signal.SIGINT, signal.SIGTERM)


class LoadInterrupted(KeyboardInterrupt):
    """The loader got SIGINT or SIGTERM; the load's statement was cancelled.

    A KeyboardInterrupt, so that everything which lets Ctrl-C through (psycopg
    waits for the cancelled statement to end, SQLAlchemy drops the connection)
    treats SIGTERM alike."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def load_timeout_ms() -> int:
    """QDSL_LOAD_STATEMENT_TIMEOUT_MS, else 600,000; a usage error when malformed."""
    raw = getenv(LOAD_TIMEOUT_ENV) or ""
    text = raw.strip()
    if not text:
        return DEFAULT_LOAD_TIMEOUT_MS
    if not re.fullmatch(r"[0-9]{1,9}", text) or not 1 <= int(text) <= _MAX_TIMEOUT_MS:
        raise UsageError(
            "bad_setting",
            f"{LOAD_TIMEOUT_ENV} must be a whole number of milliseconds from 1 to "
            f"{_MAX_TIMEOUT_MS}, got {raw!r}",
            hint=f"for example {LOAD_TIMEOUT_ENV}={DEFAULT_LOAD_TIMEOUT_MS}",
            retryable=False,
        )
    return int(text)


def load_timeout(timeout_ms: int) -> StatementTimeout:
    return StatementTimeout(
        f"a statement of the load ran longer than {LOAD_TIMEOUT_ENV} ({timeout_ms} ms) and was "
        "cancelled; nothing was loaded",
        hint=f"look for a lock held on semantic_facts (pg_locks), or raise {LOAD_TIMEOUT_ENV}",
        details={"timeout_ms": timeout_ms, "setting": LOAD_TIMEOUT_ENV},
    )


def prepare_session(conn: Connection, timeout_ms: int) -> None:
    """Bound and watch this transaction's statements (PostgreSQL; nothing on SQLite)."""
    if conn.dialect.name != "postgresql":
        return
    settings: list[tuple[str, str]] = [
        ("statement_timeout", str(timeout_ms)),
        ("application_name", APPLICATION_NAME),
        *_KEEPALIVES,
    ]
    if (conn.dialect.server_version_info or (0,)) >= (14,):
        settings.append(("client_connection_check_interval", str(CHECK_INTERVAL_MS)))
    conn.execute(sa.select(*(sa.func.set_config(k, v, True) for k, v in settings)))


_TABLE_STATS = sa.table(
    "pg_stat_user_tables",
    sa.column("relid", sa.Integer()),
    sa.column("n_mod_since_analyze", sa.BigInteger()),
)
_CLASS = sa.table("pg_class", sa.column("oid", sa.Integer()), sa.column("reltuples", sa.Float()))
# autovacuum_analyze_threshold and autovacuum_analyze_scale_factor's defaults
_ANALYZE_BASE, _ANALYZE_SCALE = 50, 0.1


def refresh_statistics(engine: Engine, timeout_ms: int, watch: Watch | None = None) -> None:
    """ANALYZE semantic_facts when its statistics are stale (PostgreSQL).

    `watch`: told the connection (cancel_on_signals)."""
    if engine.dialect.name != "postgresql":
        return  # the load ANALYZEs SQLite's (sampled) inside its transaction
    oid = sa.cast(semantic_facts.name, REGCLASS)
    stale = (
        sa.select(
            sa.func.coalesce(_TABLE_STATS.c.n_mod_since_analyze, 0)
            > _ANALYZE_BASE + _ANALYZE_SCALE * sa.func.greatest(_CLASS.c.reltuples, 0)
        )
        .select_from(_CLASS.outerjoin(_TABLE_STATS, _TABLE_STATS.c.relid == _CLASS.c.oid))
        .where(_CLASS.c.oid == oid)
    )
    # a transaction of its own: ANALYZE's lock lasts until it commits
    with engine.begin() as conn:
        if watch is not None:
            watch(conn)
        prepare_session(conn, timeout_ms)  # it may wait for a lock too
        if conn.execute(stale).scalar():
            # a table the role does not own is skipped with a warning, not an error
            conn.exec_driver_sql(f"ANALYZE {semantic_facts.name}")


def _canceller(conn: Connection) -> Callable[[], None]:
    """What cancels the statement `conn` runs, if it runs one (PostgreSQL)."""
    if conn.dialect.name != "postgresql":
        return lambda: None
    from psycopg import Connection as PgConnection
    from psycopg.pq import TransactionStatus

    ACTIVE = TransactionStatus.ACTIVE

    raw = conn.connection.driver_connection

    def cancel() -> None:
        if isinstance(raw, PgConnection) and raw.info.transaction_status is ACTIVE:
            raw.cancel_safe(timeout=5.0)

    return cancel


Watch = Callable[[Connection], None]


@contextmanager
def cancel_on_signals(enabled: bool = True) -> Iterator[Watch]:
    """SIGINT and SIGTERM cancel the running statement and raise LoadInterrupted.

    Yields `watch(conn)`, which names the connection whose statement a signal
    cancels (each transaction of the load in turn). Only the main thread
    receives signals; elsewhere, or when not `enabled`, nothing is installed.
    The previous handlers are restored afterwards.
    """
    cancel: list[Callable[[], None]] = [lambda: None]

    def watch(conn: Connection) -> None:
        cancel[0] = _canceller(conn)

    if not enabled or threading.current_thread() is not threading.main_thread():
        yield watch
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        # A cancel that fails (the server already gone) still stops the loader;
        # psycopg cancels once more when the interrupt reaches its wait.
        with suppress(Exception):
            cancel[0]()
        raise LoadInterrupted(signum)

    previous: dict[int, Any] = {s: signal.signal(s, stop) for s in _STOPPING}
    try:
        yield watch
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
