"""`catalog check` on relations and measures, SQLite and PostgreSQL.

The shop passes as built; a schema written carelessly (a text key pointing at
an INTEGER id, a target without a primary key, a join column without an index,
an aggregated text column) gets one actionable finding per problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from deployments.shop import SHOP_CATALOG

from qdsl.cli.main import cli
from qdsl.dsl.catalog import catalog_from_mapping
from qdsl.facts.check import check_catalog
from qdsl.facts.db import make_engine

CARELESS = [
    "CREATE TABLE parents (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, "
    "name VARCHAR(80) NOT NULL)",
    "CREATE TABLE kids (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, "
    "name VARCHAR(80) NOT NULL, parent_ref VARCHAR(20), guardian_id INTEGER, "
    "note VARCHAR(80), PRIMARY KEY (tenant_id, id))",
]
CATALOG = {
    "entities": {
        "parent": {"table": "parents", "label": "name"},
        "kid": {
            "table": "kids",
            "label": "name",
            "fields": {
                "parent_ref": {"column": "parent_ref", "type": "id"},
                "note": {"column": "note", "type": "text"},
            },
            "measures": {"notes": {"field": "note", "function": "count_distinct"}},
            "relations": {
                "parent": {"entity": "parent", "key": "parent_ref"},
                "guardian": {"entity": "parent", "key": "guardian_id", "inverse": "wards"},
                "missing": {"entity": "parent", "key": "nothing", "inverse": "lost"},
            },
        },
    }
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def careless_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'careless.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for stmt in CARELESS:
                conn.exec_driver_sql(stmt)
    finally:
        engine.dispose()
    return url


def test_the_shop_passes_with_no_finding_on_relations_or_measures(shop_url: str) -> None:
    res = CliRunner().invoke(
        cli, ["--json", "--db", shop_url, "--catalog", str(SHOP_CATALOG), "catalog", "check"]
    )
    findings = json.loads(res.stdout)["data"]["findings"]
    assert [f for f in findings if f["rule"] in ("relations", "measures")] == []
    assert res.exit_code == 0, findings


def test_careless_keys_get_one_actionable_line_each(careless_url: str) -> None:
    engine = make_engine(careless_url)
    try:
        report = check_catalog(engine, catalog_from_mapping(CATALOG))
    finally:
        engine.dispose()
    found = [f for f in report.findings if f.rule == "relations"]
    by_message = {f.message: f for f in found}
    text = "\n".join(by_message)
    assert "entities.kid.relations.missing: key column 'nothing' is not a column of 'kids'" in text
    assert "kids.parent_ref (string) cannot be compared with parents.id (integer)" in text
    unique = [f for f in found if "is not unique within a tenant" in f.message]
    assert {f.message.split(":")[0] for f in unique} == {
        "entities.kid.relations.parent",
        "entities.kid.relations.guardian",
    }
    assert all(f.fix.startswith("CREATE UNIQUE INDEX ON parents (tenant_id, id)") for f in unique)
    unindexed = [f for f in found if f.level.value == "warning"]
    assert {f.column for f in unindexed} == {"parent_ref", "guardian_id"}
    assert all("\n" not in f.message and f.fix for f in found)
    assert not report.ok


def test_a_unique_index_and_an_indexed_key_pass_and_an_aggregated_text_column_is_refused(
    careless_url: str,
) -> None:
    engine = make_engine(careless_url)
    raw = {
        "entities": {
            **CATALOG["entities"],
            "kid": {
                **CATALOG["entities"]["kid"],
                "fields": {
                    "guardian_id": {"column": "guardian_id", "type": "id"},
                    "note": {"column": "note", "type": "number", "aggregations": ["sum"]},
                },
                "relations": {"guardian": {"entity": "parent", "key": "guardian_id"}},
                "measures": {},
            },
        }
    }
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE UNIQUE INDEX ux_parents_key ON parents (tenant_id, id)")
            conn.exec_driver_sql("CREATE INDEX ix_kids_guardian ON kids (tenant_id, guardian_id)")
        report = check_catalog(engine, catalog_from_mapping(raw))
    finally:
        engine.dispose()
    assert [f for f in report.findings if f.rule == "relations"] == []
    (measure,) = [f for f in report.findings if f.rule == "measures"]
    assert measure.message == (
        "entities.kid.fields.note.aggregations aggregates kids.note, a string column"
    )


def test_a_product_measures_second_column_is_checked_like_its_first(careless_url: str) -> None:
    engine = make_engine(careless_url)
    raw = {
        "entities": {
            "kid": {
                "table": "kids",
                "label": "name",
                "fields": {
                    # an INTEGER column and a VARCHAR one, both declared numbers
                    "guardian_id": {"column": "guardian_id", "type": "number"},
                    "note": {"column": "note", "type": "number"},
                },
                "measures": {
                    "weighted": {"field": "guardian_id", "times": "note", "function": "sum"}
                },
            },
        }
    }
    try:
        report = check_catalog(engine, catalog_from_mapping(raw))
    finally:
        engine.dispose()
    found = [f.message for f in report.findings if f.rule == "measures"]
    assert found == ["entities.kid.measures.weighted.times aggregates kids.note, a string column"]
