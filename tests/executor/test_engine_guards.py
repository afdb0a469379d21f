"""The PostgreSQL-side guards hold whatever engine the caller passes.

Finding 1 of issue 13: on an AUTOCOMMIT engine, `set_config(..., true)` lasted
one statement, so the query ran as the connecting superuser with no tenant
setting, no timeout and not read only. A probe view reports, from inside the
executor's own transaction, who runs the statement and with which settings;
the executor reads it like any entity, so the probe sees exactly what a real
query sees.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.pool import NullPool

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import aexecute, execute
from qdsl.facts.db import make_async_engine, make_engine, upgrade

PROBE_CATALOG = """
[entities.probe]
table = "guard_probe"
label = "title"
default_projection = ["id", "title", "who", "timeout", "read_only", "tenant_seen", "isolation"]
query_types = ["list"]
"""
PROBE_PLAN = Plan(query_type=QueryType.LIST, entity_type="probe")
SLOW_CATALOG = """
[entities.slow]
table = "slow_items"
label = "title"
default_projection = ["id", "title"]
query_types = ["count"]
"""


def _catalog(source: str) -> Catalog:
    return catalog_from_mapping(tomllib.loads(source))


@pytest.fixture(scope="module")
def probe_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        # current_user and current_setting() in a view are evaluated for the
        # session that queries it. tenant_id follows the RLS setting, so without
        # it the executor's own tenant predicate finds no row at all.
        conn.execute(
            text(
                "CREATE VIEW guard_probe AS SELECT "
                "current_setting('app.tenant_id', true) AS tenant_id, '1'::text AS id, "
                "'probe'::text AS title, current_user::text AS who, "
                "current_setting('statement_timeout') AS timeout, "
                "current_setting('transaction_read_only') AS read_only, "
                "current_setting('app.tenant_id', true) AS tenant_seen, "
                "current_setting('transaction_isolation') AS isolation"
            )
        )
        conn.execute(text("GRANT SELECT ON guard_probe TO qdsl_reader"))
        conn.execute(
            text(
                "CREATE VIEW slow_items AS SELECT 't1'::text AS tenant_id, '1'::text AS id, "
                "'slow'::text AS title FROM pg_sleep(30)"
            )
        )
        conn.execute(text("GRANT SELECT ON slow_items TO qdsl_reader"))
    engine.dispose()
    return url


def _driver_autocommit(url: str) -> Engine:
    """Autocommit switched on behind SQLAlchemy's back, at the driver."""
    engine = make_engine(url)

    @event.listens_for(engine, "connect")
    def _on(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.autocommit = True

    return engine


SYNC_ENGINES: dict[str, Callable[[str], Engine]] = {
    "default": make_engine,
    "autocommit": lambda url: make_engine(url, isolation_level="AUTOCOMMIT"),
    "nullpool": lambda url: make_engine(url, poolclass=NullPool),
    "nullpool_autocommit": lambda url: make_engine(
        url, poolclass=NullPool, isolation_level="AUTOCOMMIT"
    ),
    "driver_autocommit": _driver_autocommit,
}
ASYNC_ENGINES: dict[str, dict[str, Any]] = {
    "async_default": {},
    "async_autocommit": {"isolation_level": "AUTOCOMMIT"},
    "async_nullpool": {"poolclass": NullPool},
}


def _probe_values(result: ExecutionResult) -> dict[str, Any]:
    assert len(result.rows) == 1, "the tenant setting did not reach the statement"
    return dict(result.rows[0].values)


def _expected(tenant: str) -> dict[str, Any]:
    return {
        "who": "qdsl_reader",
        "timeout": "1234ms",
        "read_only": "on",
        "tenant_seen": tenant,
        "isolation": "repeatable read",
    }


def _subset(values: dict[str, Any]) -> dict[str, Any]:
    return {k: values[k] for k in ("who", "timeout", "read_only", "tenant_seen", "isolation")}


@pytest.fixture(params=sorted(SYNC_ENGINES))
def sync_engine(request: pytest.FixtureRequest, probe_url: str) -> Iterator[Engine]:
    engine = SYNC_ENGINES[request.param](probe_url)
    yield engine
    engine.dispose()


def test_every_sync_engine_runs_as_reader_with_tenant_timeout_read_only(
    sync_engine: Engine,
) -> None:
    catalog = _catalog(PROBE_CATALOG)
    for tenant in ("t1", "t2", "t1"):  # a pooled connection again, with another tenant
        result = execute(PROBE_PLAN, catalog, sync_engine, tenant, timeout_ms=1234)
        assert _subset(_probe_values(result)) == _expected(tenant)
    # the caller's engine is left as it was: its own connections are not read only
    with sync_engine.connect() as conn:
        assert conn.execute(text("SELECT current_user")).scalar_one() != "qdsl_reader"
        assert conn.execute(text("SHOW transaction_read_only")).scalar_one() == "off"


@pytest.mark.parametrize("kind", sorted(ASYNC_ENGINES))
def test_every_async_engine_runs_as_reader_with_tenant_timeout_read_only(
    kind: str, probe_url: str
) -> None:
    catalog = _catalog(PROBE_CATALOG)

    async def go() -> list[dict[str, Any]]:
        engine = make_async_engine(probe_url, **ASYNC_ENGINES[kind])
        try:
            results = [
                await aexecute(PROBE_PLAN, catalog, engine, t, timeout_ms=1234)
                for t in ("t2", "t3")
            ]
            return [_subset(_probe_values(r)) for r in results]
        finally:
            await engine.dispose()

    assert asyncio.run(go()) == [_expected("t2"), _expected("t3")]


@pytest.mark.parametrize("kind", ["autocommit", "nullpool_autocommit", "driver_autocommit"])
def test_statement_timeout_holds_on_autocommit_engines(kind: str, probe_url: str) -> None:
    engine = SYNC_ENGINES[kind](probe_url)
    try:
        with pytest.raises(DatabaseError) as info:
            execute(
                Plan(query_type=QueryType.COUNT, entity_type="slow"),
                _catalog(SLOW_CATALOG),
                engine,
                "t1",
                timeout_ms=200,
            )
    finally:
        engine.dispose()
    assert info.value.code == "database/timeout"


def test_async_autocommit_statement_timeout_holds(probe_url: str) -> None:
    async def go() -> None:
        engine = make_async_engine(probe_url, isolation_level="AUTOCOMMIT")
        try:
            await aexecute(
                Plan(query_type=QueryType.COUNT, entity_type="slow"),
                _catalog(SLOW_CATALOG),
                engine,
                "t1",
                timeout_ms=200,
            )
        finally:
            await engine.dispose()

    with pytest.raises(DatabaseError) as info:
        asyncio.run(go())
    assert info.value.code == "database/timeout"


@pytest.mark.parametrize("kind", ["autocommit", "driver_autocommit"])
def test_tenant_transaction_holds_on_autocommit_engines(kind: str, probe_url: str) -> None:
    from qdsl.facts.db import READER_ROLE, tenant_transaction

    engine = SYNC_ENGINES[kind](probe_url)
    try:
        with tenant_transaction(engine, "t3", read_only=True, role=READER_ROLE) as conn:
            conn.execute(text("SELECT 1"))  # a statement between: settings must outlive it
            row = conn.execute(
                text("SELECT who, read_only, tenant_seen FROM guard_probe")
            ).one()
        assert tuple(row) == ("qdsl_reader", "on", "t3")
    finally:
        engine.dispose()
