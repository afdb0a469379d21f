"""An entity whose table is a view (a deployer's semantic layer), on both dialects.

Before: `catalog check` reported every view as "table does not exist", and on
PostgreSQL `db secure` said "nothing to do" while the reader could not select
the view, so every question failed. Now the check reads the view's columns and
types, `db secure` grants the reader SELECT on it (and changes nothing else
about it), says how its tenants are kept apart, and questions are answered for
the asking tenant only.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy import Engine

import qdsl
from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.facts.check import check_catalog
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import isolation_of, secure

_SCHEMA = (
    "CREATE TABLE people_all (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, "
    "name TEXT NOT NULL, joined DATE, active BOOLEAN NOT NULL, PRIMARY KEY (tenant_id, id))",
    "INSERT INTO people_all VALUES ('t1', 1, 'Ann', '2025-03-01', TRUE), "
    "('t1', 2, 'Ben', '2024-01-05', TRUE), ('t1', 3, 'Old', '2020-01-01', FALSE), "
    "('t2', 1, 'Gus', '2022-02-02', TRUE)",
    # the deployer's model: active people only
    "CREATE VIEW people AS SELECT tenant_id, id, name, joined FROM people_all WHERE active",
)


_CATALOG_TOML = """
[entities.person]
table = "people"
id = "id"
tenant = "tenant_id"
label = "name"
default_projection = ["id", "name", "joined"]
query_types = ["existence", "count", "list", "status"]
sorts = ["joined"]
synonyms = ["人员", "person", "people"]

[entities.person.fields.joined]
column = "joined"
type = "date"
operators = ["gt", "gte", "lt", "lte"]
synonyms = ["加入日期", "joined"]
"""


def _catalog(table: str = "people") -> Catalog:
    raw = tomllib.loads(_CATALOG_TOML)
    raw["entities"]["person"]["table"] = table
    return catalog_from_mapping(raw, "view-catalog")


def _made(url: str) -> Engine:
    engine = make_engine(url)
    with engine.begin() as conn:
        for stmt in _SCHEMA:
            conn.exec_driver_sql(stmt)
    upgrade(url)
    return engine


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def view_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('views') / 'v.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    engine = _made(url)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_view_engine(pg_database_factory: Callable[[], str]) -> Iterator[Engine]:
    engine = _made(pg_database_factory())
    yield engine
    engine.dispose()


def _names(engine: Engine, tenant: str) -> list[str]:
    got = qdsl.plan_and_answer(
        "人员有哪些", tenant, engine=engine, options=qdsl.AnswerOptions(catalog=_catalog())
    )
    assert got.status == "answered", (got.status, got.error, got.text)
    return [i["label"] for i in got.data["items"]]


def test_a_view_is_checked_and_answered(view_engine: Engine) -> None:
    catalog = _catalog()
    if view_engine.dialect.name == "postgresql":
        # as a deployer runs `qdsl db secure`: the view is granted, nothing else
        planned = secure(view_engine, catalog, reader=READER_ROLE, apply=True)
        on_view = [sql for _why, sql in planned if '"people"' in sql]
        assert any(sql.startswith("GRANT SELECT") for sql in on_view), planned
        assert not any("ROW LEVEL SECURITY" in sql or "POLICY" in sql for sql in on_view)
        assert secure(view_engine, catalog, reader=READER_ROLE, apply=False) == []
    report = check_catalog(view_engine, catalog)
    assert not [f for f in report.findings if f.rule in ("columns_exist", "field_types")]
    assert report.ok, [f.message for f in report.errors]
    assert _names(view_engine, "t1") == ["Ann", "Ben"]  # the view's rows, in id order
    assert _names(view_engine, "t2") == ["Gus"]
    status = qdsl.plan_and_answer(
        "人员 1 现在什么状态", "t2", engine=view_engine, options=qdsl.AnswerOptions(catalog=catalog)
    )
    assert "Gus" in status.text and "2022-02-02" in status.text


def test_db_secure_says_how_a_view_keeps_tenants_apart(pg_view_engine: Engine) -> None:
    view_engine = pg_view_engine
    catalog = _catalog()
    secure(view_engine, catalog, reader=READER_ROLE, apply=True)
    (view,) = [
        i for i in isolation_of(view_engine, catalog, reader=READER_ROLE) if i["table"] == "people"
    ]
    assert view["kind"] == "view" and "tenant predicate" in view["isolation"]
    warned = [f for f in check_catalog(view_engine, catalog).findings if f.table == "people"]
    assert [f.level.value for f in warned] == ["warning"], [f.message for f in warned]
    with view_engine.begin() as conn:
        # the base table is the deployer's and unsecured: a raw read of the view as
        # the reader sees every tenant, which is why the predicate is always there
        conn.exec_driver_sql(f"SET LOCAL ROLE {READER_ROLE}")
        conn.exec_driver_sql("SELECT set_config('app.tenant_id', 't2', true)")
        assert conn.exec_driver_sql("SELECT count(*) FROM people").scalar() == 3


def test_a_security_invoker_view_takes_the_tables_row_level_security(
    pg_view_engine: Engine,
) -> None:
    view_engine = pg_view_engine
    with view_engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE VIEW people_inv WITH (security_invoker = true) AS "
            "SELECT tenant_id, id, name, joined FROM people_all WHERE active"
        )
        conn.exec_driver_sql("ALTER TABLE people_all ENABLE ROW LEVEL SECURITY")
        conn.exec_driver_sql(
            "CREATE POLICY t ON people_all "
            "USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), ''))"
        )
    catalog = _catalog("people_inv")
    secure(view_engine, catalog, reader=READER_ROLE, apply=True)
    errors = check_catalog(view_engine, catalog).errors
    assert [f.details.get("tables") for f in errors if f.table == "people_inv"] == [
        ["people_all"]
    ], [f.message for f in errors]
    with view_engine.begin() as conn:
        conn.execute(sa.text(f"GRANT SELECT ON people_all TO {READER_ROLE}"))
    findings = [f for f in check_catalog(view_engine, catalog).findings if f.table == "people_inv"]
    assert findings == [], [f.message for f in findings]
    (view,) = [
        i
        for i in isolation_of(view_engine, catalog, reader=READER_ROLE)
        if i["table"] == "people_inv"
    ]
    assert "security_invoker" in view["isolation"]
    with view_engine.begin() as conn:
        conn.exec_driver_sql(f"SET LOCAL ROLE {READER_ROLE}")
        conn.exec_driver_sql("SELECT set_config('app.tenant_id', 't2', true)")
        assert conn.exec_driver_sql("SELECT count(*) FROM people_inv").scalar() == 1
    got = qdsl.plan_and_answer(
        "人员有哪些", "t1", engine=view_engine, options=qdsl.AnswerOptions(catalog=catalog)
    )
    assert [i["label"] for i in got.data["items"]] == ["Ann", "Ben"]


def test_the_db_secure_command_states_each_views_isolation(
    pg_view_engine: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(_CATALOG_TOML, encoding="utf-8")
    url = pg_view_engine.url.render_as_string(hide_password=False)
    res = CliRunner().invoke(cli, ["--json", "--db", url, "--catalog", str(path), "db", "secure"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)["data"]
    kinds = {i["table"]: i["kind"] for i in data["isolation"]}
    assert kinds["people"] == "view" and kinds["semantic_facts"] == "table"
    assert any("GRANT SELECT" in s["sql"] and '"people"' in s["sql"] for s in data["statements"])
    human = CliRunner().invoke(cli, ["--db", url, "--catalog", str(path), "db", "secure"])
    assert "view people: tenants are kept apart by the executor's tenant predicate" in human.stdout
