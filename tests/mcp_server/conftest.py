"""The MCP server tests' own SQLite demo database.

The servers under test are other processes that write to the database they
serve (the value index), so they get a file of their own rather than the
session's shared one, which the rest of the suite reads in-process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from sqlalchemy import Engine

from qdsl.facts.db import make_engine
from qdsl.facts.demo.setup import ensure_demo


@pytest.fixture(scope="package")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("mcp-sqlite") / "demo.sqlite3"
    url = f"sqlite+pysqlite:///{path}"
    ensure_demo(url)
    return url


@pytest.fixture(scope="package")
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    engine = make_engine(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="package")
def portal() -> Iterator[BlockingPortal]:
    """An event loop in a thread: sessions stay open across Hypothesis examples."""
    with start_blocking_portal() as p:
        yield p
