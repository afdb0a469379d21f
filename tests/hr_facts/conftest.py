"""An HR deployment (tests/hr_facts/hr/): employees with a many-valued `skill` fact.

Built as a deployer sets one up, like the support desk (tests/deployments/):
the deployment's DDL and rows, `qdsl.facts.db.upgrade` for qdsl's own tables,
on PostgreSQL `qdsl db secure` (reader grants, forced row-level security),
then `qdsl facts load` of `facts.jsonl`.

Fixtures: `hr_catalog`; `hr_dialect` ("sqlite" | "postgresql") with the matching
`hr_engine`, so a test using them runs once per dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from deployments.fixtures import sql_statements
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts import fact_files
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.load import load_facts
from qdsl.facts.secure import secure

HR_DIR = Path(__file__).parent / "hr"
HR_CATALOG = HR_DIR / "catalog.toml"


def build_hr_database(url: str) -> None:
    catalog = load_catalog(HR_CATALOG)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for name in ("schema.sql", "data.sql"):
                for stmt in sql_statements(HR_DIR / name):
                    conn.exec_driver_sql(stmt)
        upgrade(url)
        if engine.dialect.name == "postgresql":
            secure(engine, catalog, reader=READER_ROLE, apply=True)
        with (HR_DIR / "facts.jsonl").open("rb") as stream:
            load_facts(fact_files.read_rows(stream, "jsonl"), engine=engine, catalog=catalog)
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def hr_catalog() -> Catalog:
    return load_catalog(HR_CATALOG)


@pytest.fixture(scope="session")
def hr_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('hr-sqlite') / 'hr.sqlite3'}"
    build_hr_database(url)
    return url


@pytest.fixture(scope="session")
def hr_pg_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    build_hr_database(url)
    return url


@pytest.fixture(scope="session")
def _hr_engines() -> Iterator[dict[str, Engine]]:
    engines: dict[str, Engine] = {}
    yield engines
    for engine in engines.values():
        engine.dispose()


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)])
def hr_dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def hr_engine(
    hr_dialect: str, request: pytest.FixtureRequest, _hr_engines: dict[str, Engine]
) -> Engine:
    url = str(request.getfixturevalue("hr_sqlite_url" if hr_dialect == "sqlite" else "hr_pg_url"))
    if url not in _hr_engines:
        _hr_engines[url] = make_engine(url)
    return _hr_engines[url]
