"""The executor's read-only SQLite connections.

The executor reads a SQLite file through a pool of its own beside the caller's
engine, made by `Pool.recreate()` (so it keeps the caller's pool settings and
"connect" listeners, e.g. WAL and the busy timeout of `facts.make_engine`).
Each connection is made read-only once, when it is opened: `PRAGMA
query_only` refuses every write, and `sql_lower` replaces lower(). Nothing is
toggled per call: a pragma run between queries expires every statement
sqlite3 holds prepared, which made each call re-prepare its SQL. The caller's
own pooled connections stay writable.

The pool is handed to the caller's `Engine` as a `Connection` (the engine's
dialect, compiled-statement cache and event listeners apply as to any other
of its connections) and follows the caller's pool: `engine.dispose()` drops it.

An in-memory database (`sqlite://`, `:memory:`, `mode=memory`) exists once per
connection, so another pool would read another, empty database: there
`reader_pool` returns None and the executor guards the caller's connection
for the call.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import Pool

from qdsl.executor.sqlite_functions import register_sqlite

# engine -> (the caller's pool it was made beside, the reader pool)
_POOLS: weakref.WeakKeyDictionary[Engine, tuple[Pool, Pool]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _is_memory(engine: Engine) -> bool:
    url = engine.url
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"


# set in a connection's pool record once it is read-only
READ_ONLY_INFO = "qdsl_read_only"


def _read_only(dbapi_connection: Any, record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA query_only = ON")
    finally:
        cursor.close()
    register_sqlite(dbapi_connection)
    record.info[READ_ONLY_INFO] = True


def _on_dispose(engine: Engine) -> None:
    # the caller's pool was replaced: close the reader connections beside it now
    # rather than when the old pool is collected
    with _LOCK:
        found = _POOLS.pop(engine, None)
    if found is not None:
        found[1].dispose()


def reader_pool(engine: Engine) -> Pool | None:
    """The read-only pool beside `engine`'s (None for an in-memory database)."""
    if _is_memory(engine):
        return None
    found = _POOLS.get(engine)
    if found is not None and found[0] is engine.pool:
        return found[1]
    with _LOCK:
        found = _POOLS.get(engine)
        if found is None or found[0] is not engine.pool:
            if found is not None:
                found[1].dispose()
            reader = engine.pool.recreate()
            event.listen(reader, "connect", _read_only)
            found = (engine.pool, reader)
            _POOLS[engine] = found
            if not event.contains(engine, "engine_disposed", _on_dispose):
                event.listen(engine, "engine_disposed", _on_dispose)
    return found[1]


def reader_connection(engine: Engine, pool: Pool) -> Connection:
    """A Connection of `engine` over a read-only connection from `pool`."""
    try:
        proxied = pool.connect()
    except engine.dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(
            None, None, exc, engine.dialect.loaded_dbapi.Error, dialect=engine.dialect
        ) from exc
    return Connection(engine, proxied)
