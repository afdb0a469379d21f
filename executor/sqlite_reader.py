"""The executor's read-only SQLite connections.

The executor reads a SQLite file through connections of its own beside the
caller's engine, made by a pool from `Pool.recreate()` (so they get the
caller's pool settings and "connect" listeners, e.g. WAL and the busy timeout
of `facts.make_engine`). Each connection is made read-only once, when it is
opened: `PRAGMA query_only` refuses every write, and `sql_lower` replaces
lower(). Nothing is toggled per call: a pragma run between queries expires
every statement sqlite3 holds prepared, which made each call re-prepare its
SQL. The caller's own pooled connections stay writable.

Two ways out of one `Readers`:

* `lease()` hands out a bare sqlite3 connection, for a call nobody listens
  on (`executor.run`): a pool checkout and a `Connection` around it cost
  more than the statements of a small plan. Leased connections are opened
  through the reader pool and detached from it, so they are the executor's
  own; at most as many are open as the caller's pool allows (its size plus
  overflow, waiting its timeout like its checkout does).
* `connection()` hands out a `Connection` of the caller's engine over the
  reader pool, for a call that must go through SQLAlchemy (event listeners
  on the engine: the engine's dialect, compiled cache and listeners apply as
  to any other of its connections).

Both follow the caller's pool (`engine.dispose()` closes them) and the file:
the file's identity (device and inode) is checked on every call, and a file
replaced underneath (a demo rebuilt, a database restored) gets fresh
connections. A connection opened before would go on reading the old,
unlinked file: stale rows, or I/O errors once its -wal and -shm are another
file's.

The connection a call is reading through can be found while it runs
(`connections_in_use`), so a caller can interrupt its statement.

An in-memory database (`sqlite://`, `:memory:`, `mode=memory`) exists once per
connection, so another pool would read another, empty database: there
`readers` returns None and the executor guards the caller's connection for
the call.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import Pool, QueuePool

from qdsl.executor.sqlite_functions import register_sqlite

# set in a connection's pool record once it is read-only
READ_ONLY_INFO = "qdsl_read_only"

Identity = tuple[int, int] | None


def _read_only(dbapi_connection: Any, record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA query_only = ON")
    finally:
        cursor.close()
    register_sqlite(dbapi_connection)
    record.info[READ_ONLY_INFO] = True


def _is_memory(engine: Engine) -> bool:
    url = engine.url
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"


def _identity(path: str) -> Identity:
    """Which file `path` names now (None: none, or not a plain path)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _limit(pool: Pool) -> tuple[int | None, float]:
    """How many connections the caller's pool allows open at once, and how long
    its checkout waits for one (None: no bound)."""
    if isinstance(pool, QueuePool):
        overflow = pool._max_overflow  # no public reader of the setting
        if overflow >= 0:
            return pool.size() + overflow, pool.timeout()
    return None, 0.0


class Readers:
    """The read-only connections of one SQLite file beside one caller pool."""

    def __init__(self, engine: Engine, identity: Identity) -> None:
        self.engine = engine
        self.caller_pool = engine.pool
        self.url = engine.url
        self.path = engine.url.database or ""
        self.identity = identity
        self.pool = engine.pool.recreate()
        event.listen(self.pool, "connect", _read_only)
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)
        self._idle: list[Any] = []
        self._open = 0
        self._max, self._timeout = _limit(engine.pool)
        self.closed = False

    # -- bare connections (no listeners) -----------------------------------------------

    def lease(self) -> Any:
        """A read-only sqlite3 connection, the caller's until `give_back`."""
        with self._lock:
            if not self._idle and self._max is not None and self._open >= self._max:
                self._wait(self._max)
            if self._idle:
                return self._idle.pop()
            self._open += 1
        try:
            proxied = _checkout(self.engine, self.pool)
            raw = proxied.dbapi_connection
            proxied.detach()  # the executor's own now: the pool opens another for its record
        except BaseException:
            self._forget()
            raise
        return raw

    def _wait(self, most: int) -> None:
        deadline = time.monotonic() + self._timeout
        while not self._idle and self._open >= most:
            left = deadline - time.monotonic()
            if left <= 0:
                # as the caller's pool fails a checkout: classified as pool exhaustion
                raise PoolTimeout(
                    f"all {most} read-only connections are in use, "
                    f"none freed within {self._timeout:g} s"
                )
            self._freed.wait(left)

    def give_back(self, raw: Any, *, reusable: bool = True) -> None:
        """Return a leased connection: kept for the next call, or closed (the file
        moved on, the pool was disposed, or the call failed on it)."""
        with self._lock:
            if reusable and not self.closed:
                self._idle.append(raw)
                self._freed.notify()
                return
        _close(raw)
        self._forget()

    def _forget(self) -> None:
        with self._lock:
            self._open -= 1
            self._freed.notify()

    # -- through SQLAlchemy ------------------------------------------------------------

    def connection(self) -> Connection:
        """A Connection of the caller's engine over a read-only pooled connection."""
        return Connection(self.engine, _checkout(self.engine, self.pool))

    def close(self) -> None:
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._freed.notify_all()
        for raw in idle:
            _close(raw)
        self.pool.dispose()


def _close(raw: Any) -> None:
    try:
        raw.close()
    except Exception:  # a connection that cannot close is gone either way
        return


def _checkout(engine: Engine, pool: Pool) -> Any:
    try:
        return pool.connect()
    except engine.dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(
            None, None, exc, engine.dialect.loaded_dbapi.Error, dialect=engine.dialect
        ) from exc


# engine -> its Readers (made beside engine.pool, for one file)
_READERS: weakref.WeakKeyDictionary[Engine, Readers] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _on_dispose(engine: Engine) -> None:
    # the caller's pool was replaced: close the reader connections beside it now
    # rather than when the old pool is collected
    with _LOCK:
        found = _READERS.pop(engine, None)
    if found is not None:
        found.close()


def readers(engine: Engine) -> Readers | None:
    """The read-only connections beside `engine`'s pool, for the file its URL names
    now (None for an in-memory database)."""
    found = _READERS.get(engine)
    # a file database (only those get readers) at the same URL, still the same file
    if (
        found is not None
        and found.url is engine.url
        and found.caller_pool is engine.pool
        and found.identity == _identity(found.path)
    ):
        return found
    if _is_memory(engine):
        return None
    identity = _identity(engine.url.database or "")
    with _LOCK:
        found = _READERS.get(engine)
        if found is None or found.caller_pool is not engine.pool or found.identity != identity:
            if found is not None:
                found.close()
            found = _READERS[engine] = Readers(engine, identity)
            if not event.contains(engine, "engine_disposed", _on_dispose):
                event.listen(engine, "engine_disposed", _on_dispose)
    return found


def reader_pool(engine: Engine) -> Pool | None:
    """The read-only pool beside `engine`'s (None for an in-memory database)."""
    found = readers(engine)
    return found.pool if found is not None else None


def reader_connection(engine: Engine, pool: Pool) -> Connection:
    """A Connection of `engine` over a read-only connection from `pool`."""
    return Connection(engine, _checkout(engine, pool))


# -- the connection a call reads through ------------------------------------------------

_IN_USE: ContextVar[list[Any] | None] = ContextVar("qdsl_sqlite_in_use", default=None)


@contextmanager
def connections_in_use() -> Iterator[list[Any]]:
    """A list holding, while a statement of an executor call made in this context
    runs, the sqlite3 connection it runs on (threads started with a copy of the
    context, e.g. `asyncio.to_thread`, included): `interrupt()` on it stops the
    statement, which then fails as interrupted."""
    holder: list[Any] = []
    token = _IN_USE.set(holder)
    try:
        yield holder
    finally:
        _IN_USE.reset(token)


def holder() -> list[Any] | None:
    """The `connections_in_use` list of this context, if any."""
    return _IN_USE.get()
