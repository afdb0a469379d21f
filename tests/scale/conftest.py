"""Fixtures of the scale tests (`pg_parts`): a primary with two streaming hot
standbys, seeded with the demo, and PgBouncer in transaction mode in front of
the test server. Each is started once per session, on free ports, and stopped
at its end; the tests that change a part (stop a standby, pause its replay)
put it back before they end.

The executor's and the facts' suites are on the path: their checks run here
against other servers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_parts import Bouncer, Cluster, start_cluster, start_pgbouncer
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from qdsl.facts.db import make_engine
from qdsl.facts.demo.setup import ensure_demo

for _suite in ("executor", "facts"):
    _path = str(Path(__file__).resolve().parents[1] / _suite)
    if _path not in sys.path:
        sys.path.append(_path)  # after the test dirs pytest puts first: nothing is shadowed


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    found = start_cluster(2, ensure_demo)
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture(scope="session")
def primary_engine(cluster: Cluster) -> Iterator[Engine]:
    engine = make_engine(cluster.primary_url())
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def standby_engines(cluster: Cluster) -> Iterator[list[Engine]]:
    engines = [make_engine(cluster.standby_url(i)) for i in range(len(cluster.standbys))]
    yield engines
    for engine in engines:
        engine.dispose()


@pytest.fixture(scope="session")
def bouncer(pg_admin_url: str) -> Iterator[Bouncer]:
    found = start_pgbouncer(make_url(pg_admin_url).port or 5432)
    try:
        yield found
    finally:
        found.stop()
