"""The read-only pool beside a caller's SQLite pool, for the tenant session.

A SQLite file is read through connections of the executor's own, made by a
pool from `Pool.recreate()` (so they get the caller's pool settings and
"connect" listeners, e.g. WAL and the busy timeout of `facts.make_engine`)
and handed out as `Connection`s of the caller's engine (its dialect, compiled
cache and listeners apply as to any other of its connections). Each is made
read-only once, when opened (`executor.session.sqlite_opened`): every flag
pragma SQLite runs expires every statement the connection holds prepared, so
one toggled per call (`query_only`, or `read_uncommitted` for an isolation
level) made each call prepare its SQL again. The caller's own pooled
connections stay writable.

The pool follows the caller's (`engine.dispose()` closes it) and the file:
its identity (device, inode) is checked on every call, and a file replaced
underneath (a demo rebuilt, a database restored) gets a fresh pool, where a
connection opened before would go on reading the old, unlinked file.

An in-memory database (`sqlite://`, `:memory:`, `mode=memory`) exists once per
connection, so another pool would read another, empty database: there
`reader_pool` is None and the session guards the caller's connection.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import Pool

Identity = tuple[int, int] | None


def _is_memory(engine: Engine) -> bool:
    url = engine.url
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"


def file_identity(path: str) -> Identity:
    """Which file `path` names now (None: none, or not a plain path)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


class _Readers:
    """The read-only pool of one SQLite file beside one caller pool."""

    def __init__(self, engine: Engine, identity: Identity, opened: Callable[..., None]) -> None:
        self.caller_pool = engine.pool
        self.url = engine.url
        self.identity = identity
        self.pool = engine.pool.recreate()
        event.listen(self.pool, "connect", opened)


# engine -> its readers (made beside engine.pool, for one file)
_READERS: weakref.WeakKeyDictionary[Engine, _Readers] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _on_dispose(engine: Engine) -> None:
    # the caller's pool was replaced: close the reader connections beside it now
    # rather than when the old pool is collected
    with _LOCK:
        found = _READERS.pop(engine, None)
    if found is not None:
        found.pool.dispose()


def reader_pool(engine: Engine, opened: Callable[..., None]) -> Pool | None:
    """The read-only pool beside `engine`'s, for the file its URL names now (None for
    an in-memory database); `opened(dbapi_connection, record)` makes a new
    connection read-only."""
    found = _READERS.get(engine)
    path = engine.url.database or ""
    if (
        found is not None
        and found.url is engine.url
        and found.caller_pool is engine.pool
        and found.identity == file_identity(path)
    ):
        return found.pool
    if _is_memory(engine):
        return None
    identity = file_identity(path)
    with _LOCK:
        found = _READERS.get(engine)
        if found is None or found.caller_pool is not engine.pool or found.identity != identity:
            if found is not None:
                found.pool.dispose()
            found = _READERS[engine] = _Readers(engine, identity, opened)
            if not event.contains(engine, "engine_disposed", _on_dispose):
                event.listen(engine, "engine_disposed", _on_dispose)
    return found.pool


def reader_connection(engine: Engine, pool: Pool) -> Connection:
    """A Connection of `engine` over a read-only connection from `pool`."""
    try:
        proxied: Any = pool.connect()
    except engine.dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(
            None, None, exc, engine.dialect.loaded_dbapi.Error, dialect=engine.dialect
        ) from exc
    return Connection(engine, proxied)
