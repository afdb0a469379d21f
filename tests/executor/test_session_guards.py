"""The database-side guards: read-only role, row-level security, tenant setting
and statement timeout on PostgreSQL; query_only and the timeout on SQLite."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog, catalog_from_mapping, demo_catalog
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.executor.run import aexecute, execute
from qdsl.executor.session import atenant_session, tenant_session
from qdsl.facts.db import make_async_engine, make_engine, upgrade
from qdsl.facts.dberrors import StatementTimeout

SLOW_CATALOG_TOML = """
[entities.slow]
table = "slow_items"
label = "title"
default_projection = ["id", "title"]
query_types = ["list", "count"]
"""


def slow_catalog() -> Catalog:
    import tomllib

    return catalog_from_mapping(tomllib.loads(SLOW_CATALOG_TOML))


SLOW_PLAN = Plan(query_type=QueryType.COUNT, entity_type="slow")
CATALOG = demo_catalog()


# -- PostgreSQL ------------------------------------------------------------------------


def test_reader_role_sees_nothing_without_tenant_and_cannot_write(pg_engine: Engine) -> None:
    with pg_engine.connect() as conn, conn.begin():
        conn.execute(text("SET LOCAL ROLE qdsl_reader"))
        for table in ("projects", "semantic_facts", "text_grams", "configs"):
            assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
        with pytest.raises(DBAPIError) as info:
            conn.execute(
                text(
                    "INSERT INTO projects (tenant_id, id, title, status, created_at) "
                    "VALUES ('t1', '999', 'x', 'active', now())"
                )
            )
        assert getattr(info.value.orig, "sqlstate", None) == "42501"  # insufficient_privilege


@pytest.mark.parametrize(("custom", "plans"), [(False, "auto"), (True, "force_custom_plan")])
def test_executor_session_is_read_only_reader_bound_to_tenant(
    pg_engine: Engine, custom: bool, plans: str
) -> None:
    probe = text(
        "SELECT current_user, current_setting('transaction_read_only'), "
        "current_setting('statement_timeout'), current_setting('app.tenant_id'), "
        "current_setting('plan_cache_mode')"
    )
    with tenant_session(pg_engine, "t2", 1234) as session:
        (row,) = session.execute("fallback" if custom else "main", probe, {}).data
        assert tuple(row) == ("qdsl_reader", "on", "1234ms", "t2", plans)
        conn = session.connection
        # RLS alone already confines even a query without a tenant predicate
        tenants = conn.execute(text("SELECT DISTINCT tenant_id FROM projects")).scalars().all()
        assert tenants == ["t2"]
        with pytest.raises(DBAPIError):
            conn.execute(text("DELETE FROM projects"))


def test_a_database_without_the_reader_role_is_refused_not_read_as_owner(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qdsl.executor import session

    monkeypatch.setattr(session, "READER_ROLE", "qdsl_reader_that_does_not_exist")
    plan = Plan(query_type=QueryType.COUNT, entity_type="project")
    engine = make_engine(pg_url)  # a fresh engine: the role check is remembered per engine
    try:
        with pytest.raises(DatabaseError) as caught:
            execute(plan, CATALOG, engine, "t1")
        assert caught.value.code == "database/reader_role_missing"
        assert caught.value.retryable is False

        async_engine = make_async_engine(pg_url)
        try:
            with pytest.raises(DatabaseError) as acaught:
                asyncio.run(aexecute(plan, CATALOG, async_engine, "t1"))
            assert acaught.value.code == "database/reader_role_missing"
        finally:
            asyncio.run(async_engine.dispose())
    finally:
        engine.dispose()


def test_pooled_connections_are_writable_again_after_execute(pg_engine: Engine) -> None:
    execute(Plan(query_type=QueryType.COUNT, entity_type="project"), CATALOG, pg_engine, "t1")
    for _ in range(3):  # whichever pooled connection comes back
        with pg_engine.begin() as conn:
            assert conn.execute(text("SHOW transaction_read_only")).scalar_one() == "off"
            assert conn.execute(text("SELECT current_user")).scalar_one() != "qdsl_reader"


@pytest.fixture
def slow_pg_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE VIEW slow_items AS SELECT 't1'::text AS tenant_id, '1'::text AS id, "
                "'slow'::text AS title FROM pg_sleep(5)"
            )
        )
        conn.execute(text("GRANT SELECT ON slow_items TO qdsl_reader"))
    engine.dispose()
    return url


def test_pg_statement_timeout_is_database_timeout(slow_pg_url: str) -> None:
    engine = make_engine(slow_pg_url)
    try:
        with pytest.raises(DatabaseError) as info:
            execute(SLOW_PLAN, slow_catalog(), engine, "t1", timeout_ms=200)
    finally:
        engine.dispose()
    assert info.value.code == "database/timeout" and info.value.exit_code == 8
    # (the view sleeps 5 s: an answer instead of this error would mean no timeout fired;
    # how soon it fired is the machine's, not asserted)
    assert isinstance(info.value, StatementTimeout) and info.value.retryable


def test_pg_async_statement_timeout(slow_pg_url: str) -> None:
    async def go() -> None:
        engine = make_async_engine(slow_pg_url)
        try:
            await aexecute(SLOW_PLAN, slow_catalog(), engine, "t1", timeout_ms=200)
        finally:
            await engine.dispose()

    with pytest.raises(DatabaseError) as info:
        asyncio.run(go())
    assert info.value.subtype == "timeout"


def test_cli_run_timeout_exits_8(
    slow_pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = tmp_path / "slow.toml"
    catalog.write_text(SLOW_CATALOG_TOML, encoding="utf-8")
    monkeypatch.setenv("QDSL_STATEMENT_TIMEOUT_MS", "200")
    result = CliRunner().invoke(
        cli,
        [
            "--json",
            "--db",
            slow_pg_url,
            "--catalog",
            str(catalog),
            "run",
            "--tenant",
            "t1",
            "--plan",
            "count slow",
        ],
    )
    assert result.exit_code == 8, result.output
    envelope = json.loads(result.stderr.strip().splitlines()[-1])
    assert envelope["error"]["type"] == "database" and envelope["error"]["subtype"] == "timeout"


# -- SQLite ----------------------------------------------------------------------------


@pytest.fixture
def slow_sqlite_url(tmp_path: Path) -> str:
    path = tmp_path / "slow.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE VIEW slow_items AS WITH RECURSIVE c(x) AS "
            "(SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000000) "
            "SELECT 't1' AS tenant_id, CAST(x AS TEXT) AS id, 'slow' AS title FROM c"
        )
    return f"sqlite+pysqlite:///{path}"


def test_sqlite_timeout_interrupts_the_statement(slow_sqlite_url: str) -> None:
    engine = make_engine(slow_sqlite_url)
    started = time.monotonic()
    try:
        with pytest.raises(DatabaseError) as info:
            execute(SLOW_PLAN, slow_catalog(), engine, "t1", timeout_ms=200)
        # the connection is usable again and no longer query_only
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE after_timeout (x INTEGER)"))
    finally:
        engine.dispose()
    assert info.value.code == "database/timeout"
    assert isinstance(info.value, StatementTimeout) and info.value.retryable
    assert time.monotonic() - started < 5


def test_sqlite_execution_is_query_only(sqlite_engine: Engine) -> None:
    seen: list[int] = []
    with tenant_session(sqlite_engine, "t1", 1000) as session:
        conn = session.connection
        seen.append(conn.exec_driver_sql("PRAGMA query_only").scalar_one())
        with pytest.raises(DBAPIError):
            conn.exec_driver_sql("DELETE FROM projects")
    with sqlite_engine.connect() as conn:  # the caller's own
        seen.append(conn.exec_driver_sql("PRAGMA query_only").scalar_one())
    assert seen == [1, 0]


def test_sqlite_executor_connection_refuses_writes_and_caller_stays_writable(
    sqlite_engine: Engine,
) -> None:
    """The executor reads a SQLite file through connections made read-only when
    opened; the caller's own connections of the same engine still write."""
    plan = Plan(query_type=QueryType.COUNT, entity_type="project")
    before = execute(plan, CATALOG, sqlite_engine, "t1").count
    for _ in range(2):  # a new connection, then a pooled one again
        with tenant_session(sqlite_engine, "t1", 1000) as session:
            conn = session.connection
            assert conn.engine is sqlite_engine
            assert conn.exec_driver_sql("PRAGMA query_only").scalar_one() == 1
            for write in (
                "DELETE FROM projects",
                "UPDATE projects SET title = 'x'",
                "CREATE TABLE executor_wrote (x INTEGER)",
            ):
                with pytest.raises(DBAPIError) as info:
                    conn.exec_driver_sql(write)
                assert "readonly" in str(info.value.orig).replace("-", "").lower()
    with sqlite_engine.begin() as conn:
        assert conn.exec_driver_sql("PRAGMA query_only").scalar_one() == 0
        conn.exec_driver_sql("CREATE TABLE caller_wrote (x INTEGER)")
        conn.exec_driver_sql("DROP TABLE caller_wrote")
    assert execute(plan, CATALOG, sqlite_engine, "t1").count == before


def test_sqlite_reader_connections_follow_the_callers_dispose(sqlite_url: str) -> None:
    from qdsl.executor.session import sqlite_opened
    from qdsl.executor.sqlite_pool import reader_pool

    engine = make_engine(sqlite_url)
    try:
        plan = Plan(query_type=QueryType.COUNT, entity_type="project")
        for _ in range(3):
            execute(plan, CATALOG, engine, "t1")
        first = reader_pool(engine, sqlite_opened)
        assert first is not None and first is reader_pool(engine, sqlite_opened)
        assert first.checkedin() == 1  # one connection served every call, back in its pool
        engine.dispose()
        assert first.checkedin() == 0  # closed with the caller's pool
        execute(plan, CATALOG, engine, "t1")
        assert reader_pool(engine, sqlite_opened) is not first
    finally:
        engine.dispose()


def test_sqlite_in_memory_database_is_guarded_for_the_call() -> None:
    """An in-memory database exists per connection: the executor reads the
    caller's own, query_only for the call and writable again after."""
    from sqlalchemy.pool import StaticPool

    from qdsl.executor.session import sqlite_opened
    from qdsl.executor.sqlite_pool import reader_pool

    engine = make_engine("sqlite://", poolclass=StaticPool)
    try:
        assert reader_pool(engine, sqlite_opened) is None
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE slow_items (tenant_id TEXT, id TEXT, title TEXT)")
            conn.exec_driver_sql("INSERT INTO slow_items VALUES ('t1', '1', 'a'), ('t2', '2', 'b')")
        result = execute(SLOW_PLAN, slow_catalog(), engine, "t1")
        assert result.count == 1
        with engine.begin() as conn:
            assert conn.exec_driver_sql("PRAGMA query_only").scalar_one() == 0
            conn.exec_driver_sql("INSERT INTO slow_items VALUES ('t1', '3', 'c')")
    finally:
        engine.dispose()


def test_pg_custom_plans_only_for_the_text_fallback(pg_engine: Engine) -> None:
    """Facts first keep the server's plan cache (generic plans for prepared
    statements); the text fallback is planned for its parameters, set before
    its statement whether it runs first or after an empty facts-first read."""
    import sqlalchemy as sa

    from qdsl.dsl.ir import Filter, Operator, RetrievalPolicy

    seen: list[tuple[str, str]] = []
    asking = [False]

    def note(conn: Any, _cursor: object, statement: str, *_args: object) -> None:
        if asking[0] or "set_config" in statement or "pg_roles" in statement:
            return
        asking[0] = True
        try:
            mode = conn.exec_driver_sql("SHOW plan_cache_mode").scalar_one()
        finally:
            asking[0] = False
        seen.append(("fallback" if "text_grams" in statement else "main", mode))

    def plan(facts_first: bool) -> Plan:
        return Plan(
            query_type=QueryType.LIST,
            entity_type="project",
            filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),),
            retrieval_policy=RetrievalPolicy(facts_first=facts_first, allow_fallback_text=True),
        )

    cases = [
        ("t1", True, [("main", "auto")]),  # found by facts: no fallback
        ("t1", False, [("fallback", "force_custom_plan")]),  # the fallback first
        # nothing by facts: the fallback follows, with custom plans
        ("t2", True, [("main", "auto"), ("fallback", "force_custom_plan")]),
    ]
    for tenant, facts_first, expected in cases:
        seen.clear()
        sa.event.listen(pg_engine, "before_cursor_execute", note)
        try:
            execute(plan(facts_first), CATALOG, pg_engine, tenant)
        finally:
            sa.event.remove(pg_engine, "before_cursor_execute", note)
        assert seen == expected, (tenant, facts_first)


def test_pg_statements_stay_prepared_on_pooled_connections(pg_url: str) -> None:
    """psycopg prepares a statement run often on a connection (prepare_threshold)
    and, as the executor ends its read-only transaction with COMMIT (a rollback
    makes psycopg forget them), the prepared statement serves every later call
    on the pooled connection; the fallback's is never planned generically."""
    import sqlalchemy as sa

    from qdsl.dsl.ir import Filter, Operator, RetrievalPolicy

    def plan(facts_first: bool) -> Plan:
        return Plan(
            query_type=QueryType.LIST,
            entity_type="project",
            filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),),
            retrieval_policy=RetrievalPolicy(facts_first=facts_first, allow_fallback_text=True),
        )

    ran: dict[str, int] = {}

    def note(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        ran[statement] = ran.get(statement, 0) + 1

    engine = make_engine(pg_url, pool_size=1, max_overflow=0)  # one connection, reused
    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        for i in range(12):
            tenant = ("t1", "t2")[i % 2]  # t2 has no A股 fact: its fallback follows
            execute(plan(True), CATALOG, engine, tenant)
            execute(plan(False), CATALOG, engine, tenant)
        sa.event.remove(engine, "before_cursor_execute", note)
        with engine.connect() as conn:
            threshold = conn.connection.driver_connection.prepare_threshold
            found = conn.execute(
                text(
                    "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements "
                    "WHERE statement LIKE '%semantic_facts%' OR statement LIKE '%text_grams%'"
                )
            ).all()
    finally:
        engine.dispose()
    runs = {k: v for k, v in ran.items() if "semantic_facts" in k or "text_grams" in k}
    assert len(runs) == 2 and len(found) == 2  # main and fallback, each prepared once
    for statement, generic, custom in found:
        count = next(
            v
            for k, v in runs.items()
            if k.split()[0] == statement.split()[0]
            and ("text_grams" in k) == ("text_grams" in statement)
        )
        # psycopg prepares after `threshold` runs; every later run used the prepared one
        assert generic + custom == count - threshold, statement[:60]
        if "text_grams" in statement:
            assert generic == 0


def test_sqlite_async_executor_connection_refuses_writes(sqlite_url: str) -> None:
    """The asyncio twin reads through the same kind of read-only pool."""
    from qdsl.executor.session import sqlite_opened
    from qdsl.executor.sqlite_pool import reader_pool

    plan = Plan(query_type=QueryType.COUNT, entity_type="project")

    async def go() -> tuple[int | None, int, str, int]:
        engine = make_async_engine(sqlite_url)
        try:
            count = (await aexecute(plan, CATALOG, engine, "t1")).count
            async with atenant_session(engine, "t1", 1000) as session:
                conn = session.connection
                flag = (await conn.exec_driver_sql("PRAGMA query_only")).scalar_one()
                try:
                    await conn.exec_driver_sql("DELETE FROM projects")
                    refused = "no"
                except DBAPIError as exc:
                    refused = str(exc.orig)
            pool = reader_pool(engine.sync_engine, sqlite_opened)
            assert pool is not None and pool.checkedin() == 1
            async with engine.connect() as own:  # the caller's: writable
                caller_flag = (await own.exec_driver_sql("PRAGMA query_only")).scalar_one()
            return count, flag, refused, caller_flag
        finally:
            await engine.dispose()

    count, flag, refused, caller_flag = asyncio.run(go())
    assert count == execute(plan, CATALOG, make_engine(sqlite_url), "t1").count
    assert flag == 1 and "readonly" in refused.replace("-", "").lower()
    assert caller_flag == 0
