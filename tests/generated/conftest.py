"""A fresh database per generated deployment, built and dropped around its questions.

`deployment_database(dialect)` is a context manager: it builds the deployment's
database (tests/generated/database.py) and yields an engine on it. SQLite: a
new file per deployment. PostgreSQL: a new database on the test server per
deployment (its URL is new, so no process-wide cache of qdsl, keyed by the
database, can serve one deployment's values to another), dropped WITH (FORCE)
when the questions are done.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from generated.database import Builder, build_database
from generated.model import Deployment
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from qdsl.facts.db import make_engine


@contextmanager
def _serving(dep: Deployment, url: str) -> Iterator[Engine]:
    build_database(dep, url)
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def sqlite_deployments(tmp_path_factory: pytest.TempPathFactory) -> Builder:
    root: Path = tmp_path_factory.mktemp("generated")
    numbers = itertools.count(1)

    @contextmanager
    def build(dep: Deployment) -> Iterator[Engine]:
        path = root / f"deployment-{next(numbers)}.sqlite3"
        try:
            with _serving(dep, f"sqlite+pysqlite:///{path}") as engine:
                yield engine
        finally:
            path.unlink(missing_ok=True)

    return build


@pytest.fixture(scope="session")
def pg_deployments(pg_admin_url: str) -> Iterator[Builder]:
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")

    @contextmanager
    def build(dep: Deployment) -> Iterator[Engine]:
        # the name is made here from hex digits, never from input
        name = f"qdsl_gen_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
        try:
            with _serving(dep, url) as engine:
                yield engine
        finally:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    yield build
    admin.dispose()
