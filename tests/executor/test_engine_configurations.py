"""Every engine configuration a caller can pass runs through the one tenant session.

On SQLite and PostgreSQL, for a sync engine as configured by default, an
AUTOCOMMIT engine, a NullPool engine and an asyncio engine: tenant A never
sees a row, count or evidence of tenant B (generated plans, every tenant);
each configuration answers exactly what the default engine answers; a write
through the session fails and is typed; a statement past its timeout is
`database/timeout`; hostile values come back as data and change nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tomllib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine, func, select, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import NullPool

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import DatabaseError, PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import aexecute, db_error, execute
from qdsl.executor.session import atenant_session, tenant_session
from qdsl.facts.db import make_async_engine, make_engine, upgrade
from qdsl.facts.demo.tables import projects
from qdsl.facts.tables import semantic_facts

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "autocommit": {"isolation_level": "AUTOCOMMIT"},
    "nullpool": {"poolclass": NullPool},
    "async": {},
}
GENEROUS_TIMEOUT_MS = 600_000
SLOW_CATALOG = """
[entities.slow]
table = "slow_items"
label = "title"
default_projection = ["id", "title"]
query_types = ["count"]
"""
HOSTILE = (
    "'; DROP TABLE projects; --",
    "x' OR tenant_id <> 't1",
    "a; DELETE FROM semantic_facts",
    "港股' UNION SELECT * FROM semantic_facts --",
)


class Runner:
    """`execute` or `aexecute` on one engine configuration, called the same way."""

    def __init__(self, url: str, config: str) -> None:
        self.config = config
        self.loop: asyncio.AbstractEventLoop | None = None
        if config == "async":
            self.loop = asyncio.new_event_loop()
            self.aengine = make_async_engine(url)
        else:
            self.engine = make_engine(url, **CONFIGS[config])

    def run(self, plan: Plan, catalog: Catalog, tenant: str, **kw: Any) -> ExecutionResult:
        if self.loop is not None:
            return self.loop.run_until_complete(aexecute(plan, catalog, self.aengine, tenant, **kw))
        return execute(plan, catalog, self.engine, tenant, **kw)

    def write_in_session(self, statement: str) -> DatabaseError:
        """The typed error a write through the tenant session fails with."""
        caught: sa_exc.SQLAlchemyError | None = None
        if self.loop is not None:

            async def go() -> None:
                nonlocal caught
                async with atenant_session(self.aengine, "t1", 5000) as session:
                    try:
                        await session.execute("main", text(statement), {})
                    except sa_exc.SQLAlchemyError as exc:
                        caught = exc

            self.loop.run_until_complete(go())
        else:
            with tenant_session(self.engine, "t1", 5000) as session:
                try:
                    session.execute("main", text(statement), {})
                except sa_exc.SQLAlchemyError as exc:
                    caught = exc
        assert caught is not None, f"{statement!r} was not refused ({self.config})"
        return db_error(caught, 5000, interrupted=False)

    def close(self) -> None:
        if self.loop is not None:
            self.loop.run_until_complete(self.aengine.dispose())
            self.loop.close()
        else:
            self.engine.dispose()


@pytest.fixture(params=sorted(CONFIGS))
def config(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def runner(db_url: str, config: str) -> Iterator[Runner]:
    found = Runner(db_url, config)
    yield found
    found.close()


_SNAPSHOTS: dict[str, Snapshot] = {}


@pytest.fixture
def data(engine: Engine, dialect: str) -> Snapshot:
    if dialect not in _SNAPSHOTS:
        _SNAPSHOTS[dialect] = snapshot(engine)
    return _SNAPSHOTS[dialect]


def _answer(result: ExecutionResult) -> tuple[Any, ...]:
    """What a result says, without what differs between two runs (ids, time)."""
    rows = [(r.tenant_id, r.entity_id, r.label, r.values, r.facts) for r in result.rows]
    evidence = sorted(e.model_dump_json(exclude={"execution_id"}) for e in result.evidence)
    return (result.template, result.count, result.truncated, result.baseline_total, rows, evidence)


@settings(max_examples=40, deadline=None)
@given(st_data=st.data())
def test_tenants_never_see_each_other_and_every_configuration_answers_alike(
    runner: Runner, engine: Engine, data: Snapshot, st_data: st.DataObject
) -> None:
    plan = st_data.draw(plans(data, query_types=ALL_TYPES))
    tenant = st_data.draw(st.sampled_from(TENANTS))
    entity = CATALOG.entity(plan.entity_type)
    own = {(r["id"], r[entity.label]) for r in data[entity.table] if r["tenant_id"] == tenant}
    facts = {f"fact:{f['id']}": f["tenant_id"] for f in data["semantic_facts"]}
    try:
        result = runner.run(plan, CATALOG, tenant, now=NOW, timeout_ms=GENEROUS_TIMEOUT_MS)
    except PlanError:
        return
    for row in result.rows:
        assert row.tenant_id == tenant
        assert (row.entity_id, row.label) in own
    for ev in result.evidence:
        assert ev.tenant_id == tenant
        if ev.kind == "fact":
            assert facts[ev.id] == tenant
    if result.count is not None:
        assert result.count <= len(own)
    default = execute(plan, CATALOG, engine, tenant, now=NOW, timeout_ms=GENEROUS_TIMEOUT_MS)
    assert _answer(result) == _answer(default)


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (
            conn.execute(select(func.count()).select_from(projects)).scalar_one(),
            conn.execute(select(func.count()).select_from(semantic_facts)).scalar_one(),
        )


def test_hostile_values_come_back_as_data(runner: Runner, engine: Engine) -> None:
    before = _counts(engine)
    for value in HOSTILE:
        for field, op in (("title", Operator.CONTAINS), ("id", Operator.IN)):
            plan = Plan(
                query_type=QueryType.LIST,
                entity_type="project",
                filters=(
                    Filter(
                        field=field, operator=op, value=(value,) if op is Operator.IN else value
                    ),
                ),
                retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
            )
            result = runner.run(plan, CATALOG, "t1", now=NOW, timeout_ms=GENEROUS_TIMEOUT_MS)
            assert result.rows == ()
    assert _counts(engine) == before


@pytest.mark.parametrize(
    "write",
    [
        "DELETE FROM projects",
        "UPDATE semantic_facts SET value_text = 'x'",
        "CREATE TABLE session_wrote (x INTEGER)",
    ],
)
def test_a_write_through_the_session_fails_typed(
    runner: Runner, engine: Engine, write: str
) -> None:
    before = _counts(engine)
    error = runner.write_in_session(write)
    assert isinstance(error, DatabaseError) and error.code.startswith("database/")
    assert _counts(engine) == before
    with engine.connect() as conn:
        names = conn.dialect.get_table_names(conn)
    assert "session_wrote" not in names


@pytest.fixture(scope="module")
def slow_urls(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> dict[str, Callable[[], str]]:
    """Per dialect, a database whose `slow_items` takes far longer than any timeout."""

    def sqlite_slow() -> str:
        path = tmp_path_factory.mktemp("slow") / "slow.sqlite3"
        with sqlite3.connect(path) as raw:
            raw.execute(
                "CREATE VIEW slow_items AS WITH RECURSIVE c(x) AS "
                "(SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000000) "
                "SELECT 't1' AS tenant_id, CAST(x AS TEXT) AS id, 'slow' AS title FROM c"
            )
        raw.close()
        return f"sqlite+pysqlite:///{path}"

    def pg_slow() -> str:
        url: str = request.getfixturevalue("pg_database_factory")()
        upgrade(url)
        engine = make_engine(url)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "CREATE VIEW slow_items AS SELECT 't1'::text AS tenant_id, '1'::text AS id, "
                    "'slow'::text AS title FROM pg_sleep(30)"
                )
            )
            conn.execute(text("GRANT SELECT ON slow_items TO qdsl_reader"))
        engine.dispose()
        return url

    return {"sqlite": sqlite_slow, "postgresql": pg_slow}


_SLOW: dict[str, str] = {}


def test_a_statement_past_its_timeout_is_a_database_timeout(
    dialect: str, config: str, slow_urls: dict[str, Callable[[], str]]
) -> None:
    if dialect not in _SLOW:
        _SLOW[dialect] = slow_urls[dialect]()
    slow = Runner(_SLOW[dialect], config)
    try:
        plan = Plan(query_type=QueryType.COUNT, entity_type="slow")
        catalog = catalog_from_mapping(tomllib.loads(SLOW_CATALOG))
        with pytest.raises(DatabaseError) as info:
            slow.run(plan, catalog, "t1", timeout_ms=100)
        assert info.value.code == "database/timeout" and info.value.retryable
    finally:
        slow.close()
