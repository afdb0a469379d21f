"""Each database fault surfaces as its own typed error, produced here by the real fault.

Closed port, missing database and file, dropped qdsl table, missing catalog
table, revoked grant, a pool held by another connection, a role over its
connection limit, a serialization failure: asserted by type, code and
`retryable` (true only for the transient ones).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from qdsl.cli.main import cli
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.dberrors import (
    CatalogTableMissing,
    DatabaseMissing,
    DatabaseUnreachable,
    PoolExhausted,
    PrivilegeMissing,
    TableMissing,
    TooManyConnections,
    TransientFailure,
    classify,
)
from qdsl.facts.demo import DEMO_NOW
from qdsl.facts.demo.setup import ensure_demo
from qdsl.facts.demo.tables import metadata as demo_tables

FACTS_PLAN = 'existence project where market_theme ~= "A股"'
COUNT_PLAN = "count project"


def _plan(text_form: str) -> Plan:
    return normalize(load_plan(text_form), demo_catalog(), PlanContext(tenant_id="t1")).plan


def _run(engine: Engine, plan: str) -> None:
    execute(_plan(plan), demo_catalog(), engine, "t1", now=DEMO_NOW)


def _cli_error(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--json", *args])
    assert result.exit_code == 8, result.output
    error: dict[str, object] = json.loads(result.stderr)["error"]
    return error


# -- connecting ------------------------------------------------------------------------


def test_closed_port_is_unreachable_and_not_retryable() -> None:
    engine = make_engine("postgresql://nobody@127.0.0.1:1/none?connect_timeout=3")
    try:
        with pytest.raises(DatabaseUnreachable) as info:
            _run(engine, COUNT_PLAN)
    finally:
        engine.dispose()
    assert info.value.code == "database/unreachable" and info.value.retryable is False
    assert "127.0.0.1:1" in info.value.message
    error = _cli_error(
        "--db",
        "postgresql://nobody@127.0.0.1:1/none?connect_timeout=3",
        "ask",
        "--tenant",
        "t1",
        "有多少个项目",
    )
    assert error["subtype"] == "unreachable" and error["retryable"] is False


def test_missing_postgresql_database(pg_admin_url: str) -> None:
    url = make_url(pg_admin_url).set(database=f"qdsl_absent_{uuid.uuid4().hex[:8]}")
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        with pytest.raises(DatabaseMissing) as info:
            _run(engine, COUNT_PLAN)
    finally:
        engine.dispose()
    assert info.value.retryable is False and url.database in info.value.message


def test_missing_sqlite_file_is_an_error_for_ask_and_run(tmp_path: Path) -> None:
    missing = tmp_path / "typo.sqlite3"
    url = f"sqlite:///{missing}"
    error = _cli_error("--db", url, "ask", "--tenant", "t1", "有多少个项目")
    assert error["code"] == "database/database_missing" and error["retryable"] is False
    error = _cli_error("--db", url, "run", "--tenant", "t1", "--plan", "count project")
    assert error["code"] == "database/database_missing"
    assert str(tmp_path) not in json.dumps(error)
    assert not missing.exists()  # reading never creates the file


# -- missing tables --------------------------------------------------------------------


@pytest.fixture
def upgraded_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """qdsl's own tables only: no demo tables."""
    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'own.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    upgrade(url)
    return url


def test_catalog_table_missing_names_it_and_says_catalog_check(upgraded_url: str) -> None:
    engine = make_engine(upgraded_url)
    try:
        with pytest.raises(CatalogTableMissing) as info:
            _run(engine, COUNT_PLAN)
    finally:
        engine.dispose()
    assert info.value.code == "database/catalog_table_missing"
    assert info.value.details["table"] == "projects" and info.value.retryable is False
    assert "qdsl catalog check" in (info.value.hint or "")


def test_dropped_qdsl_table_names_it_and_says_db_upgrade(upgraded_url: str) -> None:
    engine = make_engine(upgraded_url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
            demo_tables.create_all(conn)  # the catalog's tables exist, empty
            if conn.dialect.name == "postgresql":
                conn.execute(text("GRANT SELECT ON ALL TABLES IN SCHEMA public TO qdsl_reader"))
            conn.execute(text("DROP TABLE semantic_facts"))
        with pytest.raises(TableMissing) as info:
            _run(engine, FACTS_PLAN)
    finally:
        engine.dispose()
    assert info.value.code == "database/table_missing"
    assert info.value.details["table"] == "semantic_facts" and info.value.retryable is False
    assert "qdsl db upgrade" in (info.value.hint or "")


# -- privileges and connection limits (PostgreSQL) --------------------------------------


@pytest.fixture(scope="module")
def own_demo_pg(pg_database_factory: Callable[[], str]) -> str:
    """A demo database of this module's own, free to be damaged."""
    url = pg_database_factory()
    ensure_demo(url)
    return url


def test_revoked_grant_names_the_grant(own_demo_pg: str) -> None:
    engine = make_engine(own_demo_pg)
    try:
        with engine.begin() as conn:
            conn.execute(text("REVOKE SELECT ON projects FROM qdsl_reader"))
        try:
            with pytest.raises(PrivilegeMissing) as info:
                _run(engine, COUNT_PLAN)
        finally:
            with engine.begin() as conn:
                conn.execute(text("GRANT SELECT ON projects TO qdsl_reader"))
    finally:
        engine.dispose()
    assert info.value.code == "database/privilege_missing" and info.value.retryable is False
    assert info.value.details["grant"] == "SELECT ON projects TO qdsl_reader"
    assert "qdsl db secure" in (info.value.hint or "")


@pytest.fixture
def limited_role(pg_admin_url: str) -> Iterator[str]:
    """A login role allowed one connection; dropped afterwards (roles are cluster-wide)."""
    name = f"qdsl_limited_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{name}" LOGIN CONNECTION LIMIT 1'))
    try:
        yield make_url(pg_admin_url).set(username=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP ROLE IF EXISTS "{name}"'))
        admin.dispose()


def test_too_many_connections_is_retryable(limited_role: str) -> None:
    holder = make_engine(limited_role)
    other = make_engine(limited_role)
    try:
        with holder.connect(), pytest.raises(TooManyConnections) as info:
            _run(other, COUNT_PLAN)
    finally:
        holder.dispose()
        other.dispose()
    assert info.value.code == "database/too_many_connections" and info.value.retryable is True


def test_serialization_failure_is_transient(own_demo_pg: str) -> None:
    engine = make_engine(own_demo_pg, isolation_level="SERIALIZABLE")
    caught: list[BaseException] = []
    try:
        with engine.connect() as a, engine.connect() as b:
            for conn in (a, b):
                conn.execute(text("SELECT set_config('app.tenant_id', 't1', false)"))
                conn.execute(text("SELECT count(*) FROM projects WHERE tenant_id = 't1'"))
            touch = text("UPDATE projects SET title = title WHERE tenant_id = 't1' AND id = '64'")
            a.execute(touch)
            a.commit()
            try:
                b.execute(touch)
                b.commit()
            except DBAPIError as exc:
                caught.append(exc)
                b.rollback()
    finally:
        engine.dispose()
    (exc,) = caught
    err = classify(exc)
    assert isinstance(err, TransientFailure) and err.retryable is True


# -- the pool (both dialects) ----------------------------------------------------------


def test_pool_held_by_another_connection_is_exhausted(db_url: str) -> None:
    from qdsl.executor.session import tenant_session

    engine = make_engine(db_url, pool_size=1, max_overflow=0, pool_timeout=0.1)
    try:
        # another execution holds the engine's one connection
        with tenant_session(engine, "t1", 1000), pytest.raises(PoolExhausted) as info:
            _run(engine, COUNT_PLAN)
    finally:
        engine.dispose()
    assert info.value.code == "database/pool_exhausted" and info.value.retryable is True


def test_a_connection_lost_under_a_statement_is_retryable() -> None:
    # what SQLAlchemy raises when the server goes away mid-transaction (a standby
    # stopped, a pooler restarted): the same call succeeds on a new connection
    # (tests/scale/test_failover.py makes the real fault)
    from sqlalchemy.exc import OperationalError

    lost = OperationalError(
        "SELECT 1", {}, Exception("server closed the connection unexpectedly"),
        connection_invalidated=True,
    )
    err = classify(lost, where="postgresql+psycopg://h:1/db")
    assert err.code == "database/connection_lost" and err.retryable is True
    still_there = OperationalError("SELECT 1", {}, Exception("some other fault"))
    assert classify(still_there).retryable is False
