"""`catalog init` drafts what a deployer would write, and no tenant's values.

Before: a TEXT column was never an enum (only VARCHAR(n) was); every TEXT
column, `status` and `department_id` included, went into `text_search`; no
`references` were drafted; and the enum of a column held the union of every
tenant's values (one tenant's sponsor names reached the other's clarify texts
and LLM prompts).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl.dsl.catalog import FieldType, catalog_from_mapping
from qdsl.facts.check import Level, check_catalog
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.scaffold import draft_catalog

_LONG = "a description long enough to be prose, of the kind a question searches in"

_SCHEMA = (
    "CREATE TABLE departments (tenant_id VARCHAR(20) NOT NULL, id VARCHAR(20) NOT NULL, "
    "name TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
    "CREATE TABLE grants (tenant_id VARCHAR(20) NOT NULL, id INTEGER NOT NULL, "
    "title TEXT NOT NULL, status TEXT NOT NULL, sponsor TEXT NOT NULL, "
    "department_id TEXT, unit TEXT, abstract TEXT, PRIMARY KEY (tenant_id, id), "
    "FOREIGN KEY (tenant_id, unit) REFERENCES departments (tenant_id, id))",
)
_DEPARTMENTS = [("t1", "d1", "Physics"), ("t1", "d2", "Art"), ("t2", "d1", "Law")]
# Both tenants hold "open" and "closed"; each has sponsors of its own.
_GRANTS = [
    ("t1", 1, "Lasers", "open", "Acme Fund", "d1", "d1"),
    ("t1", 2, "Optics", "open", "Acme Fund", "d1", "d2"),
    ("t1", 3, "Murals", "closed", "Acme Fund", "d2", "d2"),
    ("t2", 1, "Courts", "open", "Zeta Trust", "d1", "d1"),
    ("t2", 2, "Juries", "closed", "Zeta Trust", "d1", "d1"),
]


def _grants(url: str) -> Engine:
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        for stmt in _SCHEMA:
            conn.exec_driver_sql(stmt)
        conn.execute(
            sa.text("INSERT INTO departments VALUES (:t, :i, :n)"),
            [{"t": t, "i": i, "n": n} for t, i, n in _DEPARTMENTS],
        )
        conn.execute(
            sa.text("INSERT INTO grants VALUES (:t, :i, :ti, :s, :sp, :d, :u, :a)"),
            [
                {"t": t, "i": i, "ti": ti, "s": s, "sp": sp, "d": d, "u": u, "a": f"{_LONG} {i}"}
                for t, i, ti, s, sp, d, u in _GRANTS
            ],
        )
    return engine


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def grants_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('grants') / 'g.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    engine = _grants(url)
    yield engine
    engine.dispose()


def test_the_draft_is_what_a_deployer_would_write(grants_engine: Engine) -> None:
    draft = draft_catalog(grants_engine, ["grants", "departments"])
    catalog = catalog_from_mapping(tomllib.loads(draft.toml), "draft")
    grant = catalog.entities["grant"]
    assert grant.fields["status"].type is FieldType.ENUM  # a TEXT column
    assert grant.fields["status"].values == ("closed", "open")
    # one tenant's sponsors are never a list every tenant sees
    assert grant.fields["sponsor"].type is FieldType.TEXT and grant.fields["sponsor"].link_values
    assert "Acme Fund" not in draft.toml and "Zeta Trust" not in draft.toml
    assert any("grants.sponsor" in n and "link_values" in n for n in draft.notes)
    assert not any("Acme" in n or "Zeta" in n for n in draft.notes)
    assert grant.fields["department_id"].references == "department"  # by its name
    assert grant.fields["unit"].references == "department"  # by its foreign key
    assert grant.text_search == ("title", "abstract")
    assert catalog.entities["department"].text_search == ("name",)
    for line in ("enum `values`", "link_values", "references", "text_search", "sensitive"):
        assert line in draft.toml.split("\n[", 1)[0], line


def test_one_tenants_value_makes_the_column_per_tenant(grants_engine: Engine) -> None:
    with grants_engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE grants SET status = 'frozen' WHERE tenant_id = 't1' AND id = 3")
        )
    draft = draft_catalog(grants_engine, ["grants"])
    status = catalog_from_mapping(tomllib.loads(draft.toml), "draft").entities["grant"]
    assert status.fields["status"].link_values and "frozen" not in draft.toml


def test_the_draft_passes_the_check_on_sqlite(tmp_path: Path) -> None:
    # (on PostgreSQL the check wants `db secure` first: tests/facts/test_catalog_init.py)
    engine = _grants(f"sqlite+pysqlite:///{tmp_path / 'g.sqlite3'}")
    try:
        draft = draft_catalog(engine, ["grants", "departments"])
        catalog = catalog_from_mapping(tomllib.loads(draft.toml), "draft")
        errors = [
            f
            for f in check_catalog(engine, catalog).findings
            if f.level is Level.ERROR and f.rule != "indexes"
        ]
    finally:
        engine.dispose()
    assert errors == [], [f.message for f in errors]
