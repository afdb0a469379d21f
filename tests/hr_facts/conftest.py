"""An HR deployment (tests/hr_facts/hr/): employees with a many-valued `skill` fact,
built like the support desk (tests/deployments/; see hr_deployment.py).

Fixtures: `hr_catalog`; `hr_dialect` ("sqlite" | "postgresql") with the matching
`hr_engine`, so a test using them runs once per dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hr_deployment import HR_CATALOG, build_hr_database
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts.db import make_engine


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
