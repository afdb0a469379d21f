"""A second deployment for tests: a support desk (tickets), not the demo.

The deployment is what a deployer writes (tests/deployments/tickets/):
`catalog.toml`, the desk's own tables as portable DDL (`schema.sql`), its rows
(`data.sql`) and one fact field's facts (`facts.jsonl`, the `qdsl facts load`
format). A database is built the way a deployer sets one up: the desk's DDL
and data, `qdsl.facts.db.upgrade` for qdsl's own tables, on PostgreSQL
`qdsl db secure` (reader grants, row-level security for the reader), `qdsl facts load`
and `qdsl index refresh`
(the text index over `text_search` columns and the value index of
`link_values` fields).

Fixtures (registered from tests/conftest.py):
* `tickets_catalog`: the loaded catalog.
* `tickets_sqlite_url` / `tickets_pg_url`: session-scoped built databases.
* `tickets_dialect` ("sqlite" | "postgresql") and the matching `tickets_url` /
  `tickets_engine`: a test using them runs once per dialect.
* `tickets_rows`: the desk's rows as plain dicts read back from SQLite with
  hand-written SQL, for oracles that recompute answers in Python.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts import fact_files
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.load import load_facts
from qdsl.facts.secure import secure

TICKETS_DIR = Path(__file__).parent / "tickets"
TICKETS_CATALOG = TICKETS_DIR / "catalog.toml"
TICKETS_TENANTS: tuple[str, ...] = ("acme", "globex")


def sql_statements(path: Path) -> list[str]:
    """The statements of a SQL file, split where a statement is complete."""
    out: list[str] = []
    buf = ""
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip().rstrip(";"))
            buf = ""
    if buf.strip():
        raise ValueError(f"{path.name}: incomplete statement at the end: {buf[:80]!r}")
    return out


def _run_file(conn: Connection, path: Path) -> None:
    for stmt in sql_statements(path):
        conn.exec_driver_sql(stmt)


def build_tickets_database(url: str) -> None:
    """Create the desk's tables and rows, migrate qdsl's own, load facts, index text."""
    catalog = load_catalog(TICKETS_CATALOG)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # data.sql spells UTC instants without an offset.
                conn.exec_driver_sql("SET LOCAL TIME ZONE 'UTC'")
            _run_file(conn, TICKETS_DIR / "schema.sql")
            _run_file(conn, TICKETS_DIR / "data.sql")
        upgrade(url)
        if engine.dialect.name == "postgresql":
            # as a deployer runs `qdsl db secure`: reader grants and the reader's RLS
            secure(engine, catalog, reader=READER_ROLE, apply=True)
        # as a deployer runs `qdsl facts load facts.jsonl` (normalized like the planner)
        with (TICKETS_DIR / "facts.jsonl").open("rb") as stream:
            load_facts(fact_files.read_rows(stream, "jsonl"), engine=engine, catalog=catalog)
        # as a deployer runs `qdsl index refresh`: the text and value indexes
        refresh_index(engine, catalog)
    finally:
        engine.dispose()


_READ_ALL = {
    "agents": "SELECT * FROM agents",
    "tickets": "SELECT * FROM tickets",
    "kb_articles": "SELECT * FROM kb_articles",
    "semantic_facts": "SELECT * FROM semantic_facts",
}


def read_rows(sqlite_path: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of the desk's tables and facts, read with plain sqlite3 (no qdsl)."""
    con = sqlite3.connect(sqlite_path)
    con.row_factory = sqlite3.Row
    try:
        return {table: [dict(r) for r in con.execute(sql)] for table, sql in _READ_ALL.items()}
    finally:
        con.close()


@pytest.fixture(scope="session")
def tickets_catalog() -> Catalog:
    return load_catalog(TICKETS_CATALOG)


@pytest.fixture(scope="session")
def tickets_sqlite_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("tickets-sqlite") / "tickets.sqlite3"
    build_tickets_database(f"sqlite+pysqlite:///{path}")
    return str(path)


@pytest.fixture(scope="session")
def tickets_sqlite_url(tickets_sqlite_path: str) -> str:
    return f"sqlite+pysqlite:///{tickets_sqlite_path}"


@pytest.fixture(scope="session")
def tickets_pg_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    build_tickets_database(url)
    return url


@pytest.fixture(scope="session")
def tickets_rows(tickets_sqlite_path: str) -> dict[str, list[dict[str, Any]]]:
    return read_rows(tickets_sqlite_path)


@pytest.fixture(scope="session")
def _tickets_engines() -> Iterator[dict[str, Engine]]:
    engines: dict[str, Engine] = {}
    yield engines
    for engine in engines.values():
        engine.dispose()


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)])
def tickets_dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def tickets_url(tickets_dialect: str, request: pytest.FixtureRequest) -> str:
    name = "tickets_sqlite_url" if tickets_dialect == "sqlite" else "tickets_pg_url"
    return str(request.getfixturevalue(name))


@pytest.fixture
def tickets_engine(tickets_url: str, _tickets_engines: dict[str, Engine]) -> Engine:
    if tickets_url not in _tickets_engines:
        _tickets_engines[tickets_url] = make_engine(tickets_url)
    return _tickets_engines[tickets_url]


@pytest.fixture
def two_databases(dialect: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """A primary and a "standby" holding the same demo but that the standby's
    active projects of t1 are closed: a count of them tells where it ran."""
    if dialect == "sqlite":
        tmp = request.getfixturevalue("tmp_path")
        primary, reader = (f"sqlite+pysqlite:///{tmp / name}.sqlite3" for name in "ab")
    else:
        make = request.getfixturevalue("pg_database_factory")
        primary, reader = make(), make()
    from qdsl.facts.demo.setup import ensure_demo

    for url in (primary, reader):
        ensure_demo(url)
    engine = make_engine(reader)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE projects SET status = 'closed' WHERE tenant_id = 't1' AND status = 'active'"
        )
    engine.dispose()
    return primary, reader
