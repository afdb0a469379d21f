"""The tenant session on a SQLite file (`executor.session`).

What a call owes the caller: the file the URL names now (a file replaced
underneath is read anew, never the old one), the caller's pool bound,
listeners see every statement, and the connection running a statement can be
found and interrupted.
"""

from __future__ import annotations

import contextvars
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.executor.run import execute
from qdsl.executor.session import tenant_session
from qdsl.executor.sqlite_reader import connections_in_use
from qdsl.facts.db import make_engine
from qdsl.facts.dberrors import PoolExhausted

ITEMS_TOML = """
[entities.item]
table = "items"
label = "title"
default_projection = ["id", "title"]
query_types = ["list", "count"]
"""

# every listener that sees a statement or a transaction
_STATEMENT_EVENTS = (
    "engine_connect",
    "before_execute",
    "after_execute",
    "before_cursor_execute",
    "after_cursor_execute",
    "begin",
    "commit",
    "rollback",
)

COUNT = Plan(query_type=QueryType.COUNT, entity_type="item")
LIST = Plan(query_type=QueryType.LIST, entity_type="item")


def items_catalog() -> Catalog:
    import tomllib

    return catalog_from_mapping(tomllib.loads(ITEMS_TOML))


def write_items(path: Path, n: int, *, slow: bool = False) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA journal_mode=WAL")
        if slow:
            raw.execute(
                "CREATE VIEW items AS WITH RECURSIVE c(x) AS "
                "(SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000000) "
                "SELECT 't1' AS tenant_id, CAST(x AS TEXT) AS id, 'slow' AS title FROM c"
            )
            return
        raw.execute("CREATE TABLE items (tenant_id TEXT, id TEXT, title TEXT)")
        raw.executemany(
            "INSERT INTO items VALUES ('t1', ?, ?)", [(str(i), f"item {i}") for i in range(n)]
        )
    raw.close()


@pytest.fixture
def items(tmp_path: Path) -> Iterator[tuple[Path, Engine]]:
    path = tmp_path / "items.sqlite3"
    write_items(path, 3)
    engine = make_engine(f"sqlite+pysqlite:///{path}")
    yield path, engine
    engine.dispose()


def test_a_replaced_file_is_read_anew(items: tuple[Path, Engine], tmp_path: Path) -> None:
    """A database file replaced underneath (restored, rebuilt) is read through new
    connections: one opened before would go on reading the old, unlinked file."""
    path, engine = items
    catalog = items_catalog()
    assert execute(COUNT, catalog, engine, "t1").count == 3
    for n in (5, 8):
        fresh = tmp_path / f"fresh-{n}.sqlite3"
        write_items(fresh, n)
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.replace(fresh, path)  # both exist at once: the new file has another inode
        assert execute(COUNT, catalog, engine, "t1").count == n
        assert execute(LIST, catalog, engine, "t1").count == n


def test_the_callers_pool_bounds_the_sessions(tmp_path: Path) -> None:
    path = tmp_path / "items.sqlite3"
    write_items(path, 3)
    engine = make_engine(
        f"sqlite+pysqlite:///{path}", pool_size=1, max_overflow=1, pool_timeout=0.1
    )
    try:
        with ExitStack() as stack:
            # sessions held open: the pool's size plus its overflow
            for _ in range(2):
                stack.enter_context(tenant_session(engine, "t1", 1000))
            with pytest.raises(PoolExhausted):
                execute(COUNT, items_catalog(), engine, "t1")
        assert execute(COUNT, items_catalog(), engine, "t1").count == 3
    finally:
        engine.dispose()


def test_a_timed_out_call_leaves_its_connection_usable(tmp_path: Path) -> None:
    path = tmp_path / "slow.sqlite3"
    write_items(path, 0, slow=True)
    engine = make_engine(f"sqlite+pysqlite:///{path}", pool_size=1, max_overflow=0)
    try:
        with pytest.raises(DatabaseError) as info:
            execute(COUNT, items_catalog(), engine, "t1", timeout_ms=50)
        assert info.value.code == "database/timeout"
        with engine.begin() as conn:  # no progress handler left, writable again
            assert conn.exec_driver_sql("PRAGMA query_only").scalar_one() == 0
            conn.exec_driver_sql("CREATE TABLE after_timeout (x INTEGER)")
            assert conn.exec_driver_sql("SELECT count(*) FROM after_timeout").scalar_one() == 0
    finally:
        engine.dispose()


def test_the_connection_in_use_can_be_interrupted(tmp_path: Path) -> None:
    """While a call's statement runs, its sqlite3 connection is in the holder of
    the calling context; interrupt() on it stops the statement."""
    path = tmp_path / "slow.sqlite3"
    write_items(path, 0, slow=True)
    engine = make_engine(f"sqlite+pysqlite:///{path}")
    outcome: list[BaseException | None] = []
    seen: list[Any] = []

    def call(holder: list[Any]) -> None:
        try:
            execute(COUNT, items_catalog(), engine, "t1", timeout_ms=60_000)
            outcome.append(None)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    try:
        with connections_in_use() as holder:
            worker = threading.Thread(target=contextvars.copy_context().run, args=(call, holder))
            started = time.monotonic()
            worker.start()
            while not holder and worker.is_alive():
                time.sleep(0.005)
            seen.extend(holder)
            # The connection is in the holder just before its statement starts, and
            # an interrupt() while no statement runs is a no-op: repeat until it lands.
            while worker.is_alive() and time.monotonic() - started < 30:
                for raw in seen:
                    raw.interrupt()
                worker.join(0.05)
        assert not worker.is_alive() and time.monotonic() - started < 30
        assert len(seen) == 1 and holder == []
        (exc,) = outcome
        assert isinstance(exc, DatabaseError)
    finally:
        engine.dispose()


@pytest.mark.parametrize("name", _STATEMENT_EVENTS)
def test_a_listener_on_the_engine_sees_the_call(items: tuple[Path, Engine], name: str) -> None:
    """Every call goes through SQLAlchemy's `Connection`, which fires every listener."""
    _path, engine = items
    fired: list[str] = []

    def note(*_args: Any, **_kw: Any) -> None:
        fired.append(name)

    sa.event.listen(engine, name, note)
    try:
        assert execute(COUNT, items_catalog(), engine, "t1").count == 3
    finally:
        sa.event.remove(engine, name, note)
    if name not in ("commit",):  # the executor ends a SQLite read with a rollback
        assert fired, name
