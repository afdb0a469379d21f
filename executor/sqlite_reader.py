"""The sqlite3 connection an executor call is reading through, while it reads.

A caller that runs `execute` on a worker thread (the MCP server) may need to
stop a statement when its client gives up: `connections_in_use` lists the
driver connection the call's tenant session runs on (`executor.session`), and
`interrupt()` on it stops the statement, which then fails as interrupted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_IN_USE: ContextVar[list[Any] | None] = ContextVar("qdsl_sqlite_in_use", default=None)


@contextmanager
def connections_in_use() -> Iterator[list[Any]]:
    """A list holding, while a statement of an executor call made in this context
    runs, the sqlite3 connection it runs on (threads started with a copy of the
    context, e.g. `asyncio.to_thread`, included)."""
    found: list[Any] = []
    token = _IN_USE.set(found)
    try:
        yield found
    finally:
        _IN_USE.reset(token)


def holder() -> list[Any] | None:
    """The `connections_in_use` list of this context, if any."""
    return _IN_USE.get()
