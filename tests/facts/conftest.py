"""Fixtures of tests/facts: a fresh database per dialect with a deployer's own tables.

`ship_db` (module scope, once per dialect) holds qdsl's tables (`db upgrade`)
and the shipping deployment's (`shipping.py`); `ship` empties it for a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import shipping
from sqlalchemy import Engine

DIALECTS = [pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)]


@pytest.fixture(params=DIALECTS, scope="module")
def ship_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Engine]]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('ship') / 'ship.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    engine = shipping.create_schema(url)
    yield url, engine
    engine.dispose()


@pytest.fixture
def ship(ship_db: tuple[str, Engine]) -> Engine:
    """The shipping database, emptied (rows and indexes) for this test."""
    shipping.wipe(ship_db[1])
    return ship_db[1]
