"""What the tenant session owes a pooled PostgreSQL connection.

The session sets its own transaction on the caller's connection
(`executor.session`), so these tests pin that the connection goes back to the
pool with its own settings in effect (whatever the engine's), also after a failed call;
statements stay prepared across calls on a pooled connection (COMMIT, not
ROLLBACK); a connection lost mid-call is dropped from the pool, not reused. The session
guards themselves (reader role, tenant, timeout, read only, isolation) are
probed on every kind of engine in test_engine_guards.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, text

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine

pytestmark = pytest.mark.pg

CATALOG = demo_catalog()
FACTS_FIRST = Plan(
    query_type=QueryType.LIST,
    entity_type="project",
    filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),),
    retrieval_policy=RetrievalPolicy(facts_first=True),
)


def _driver_settings(engine: Engine) -> tuple[Any, Any, Any]:
    """Autocommit, and the isolation and read-only mode a statement on the
    connection runs with (SQLAlchemy's reset at check-in may spell the server's
    default level explicitly on the driver: the same transactions)."""
    with engine.connect() as conn:
        raw: Any = conn.connection.driver_connection
        isolation = conn.exec_driver_sql("SHOW transaction_isolation").scalar_one()
        read_only = conn.exec_driver_sql("SHOW transaction_read_only").scalar_one()
        conn.rollback()
        return raw.autocommit, isolation, read_only


@pytest.mark.parametrize("autocommit", [False, True])
def test_the_connection_returns_with_its_own_settings(pg_url: str, autocommit: bool) -> None:
    # the engine's level is what SQLAlchemy puts back when a connection is checked in
    level = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    engine = make_engine(pg_url, pool_size=1, max_overflow=0, **level)

    try:
        before = _driver_settings(engine)
        assert before[0] is autocommit
        for plan in (FACTS_FIRST, Plan(query_type=QueryType.COUNT, entity_type="project")):
            execute(plan, CATALOG, engine, "t1")
            assert _driver_settings(engine) == before
        with pytest.raises(DatabaseError) as info:
            # fails inside the transaction: rolled back, settings put back all the same
            execute_slow(engine)
        assert info.value.code == "database/timeout"
        assert _driver_settings(engine) == before
        with engine.connect() as conn:
            assert conn.connection.driver_connection.info.transaction_status == 0  # IDLE
    finally:
        engine.dispose()


def execute_slow(engine: Engine) -> None:
    """A statement past its timeout (pg_sleep in a view the reader may read)."""
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE OR REPLACE VIEW bare_slow AS SELECT 't1'::text AS tenant_id, "
                "'1'::text AS id, 'slow'::text AS title FROM pg_sleep(5)"
            )
        )
        conn.execute(text("GRANT SELECT ON bare_slow TO qdsl_reader"))
    import tomllib

    from qdsl.dsl.catalog import catalog_from_mapping

    slow = catalog_from_mapping(
        tomllib.loads(
            '[entities.slow]\ntable = "bare_slow"\nlabel = "title"\n'
            'default_projection = ["id", "title"]\nquery_types = ["count"]\n'
        )
    )
    execute(Plan(query_type=QueryType.COUNT, entity_type="slow"), slow, engine, "t1", timeout_ms=50)


def test_statements_stay_prepared_across_calls(pg_url: str) -> None:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)  # one connection, reused
    try:
        calls = 12
        for _ in range(calls):
            execute(FACTS_FIRST, CATALOG, engine, "t1")
        with engine.connect() as conn:
            threshold = conn.connection.driver_connection.prepare_threshold
            found = conn.execute(
                text(
                    "SELECT generic_plans + custom_plans FROM pg_prepared_statements "
                    "WHERE statement LIKE '%semantic_facts%'"
                )
            ).all()
    finally:
        engine.dispose()
    # prepared after `threshold` runs, then used by every later call
    assert [tuple(r) for r in found] == [(calls - threshold,)]


def test_a_lost_connection_is_dropped_not_reused(pg_url: str, pg_admin_url: str) -> None:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)
    admin = make_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    try:
        execute(FACTS_FIRST, CATALOG, engine, "t1")
        with engine.connect() as conn:
            pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(DatabaseError):
            execute(FACTS_FIRST, CATALOG, engine, "t1")
        again = execute(FACTS_FIRST, CATALOG, engine, "t1")  # a new connection
        assert again.rows
        with engine.connect() as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != pid
    finally:
        engine.dispose()
        admin.dispose()
