"""Shared test fixtures: isolated state dir, demo databases on SQLite and PostgreSQL.

Fixtures
* (autouse) QDSL_STATE_DIR points at a per-test temp dir: no test touches ~.
* `sqlite_url` / `sqlite_engine`: session-scoped, migrated + demo-seeded SQLite file.
* `pg_url` / `pg_engine`: session-scoped, a fresh database `qdsl_test_<random>` on
  QDSL_TEST_PG_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/test),
  migrated + seeded, dropped WITH (FORCE) at the end. Without a reachable server
  these skip with the reason, or fail when QDSL_REQUIRE_PG=1. Connects as the
  server's admin user (RLS bypassed); use `SET LOCAL ROLE qdsl_reader` plus
  `set_config('app.tenant_id', ...)` to test as the executor does.
* `dialect` ("sqlite" | "postgresql", the latter marked `pg`) and the matching
  `engine` / `db_url`: a test using them runs once per dialect, and `engine` and
  `db_url` in one test always point at the same database.
* `pg_database_factory`: callable -> URL of a new EMPTY PostgreSQL database
  (dropped at session end), for migration tests.

Tests that use any pg fixture are marked `pg` automatically.

Hypothesis profiles: `ci` (the default, what `make test` runs) and `deep`
(`make test-deep`, or QDSL_HYPOTHESIS_PROFILE=deep): ten times the examples.
A property without its own max_examples takes the profile's; the reliability
suites draw a batch of plans per example, so their counts scale with it, and
record their executions in `suite_counts` (printed after the run).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from qdsl.facts.db import make_engine, normalize_url
from qdsl.facts.demo.setup import ensure_demo

_QUIET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
settings.register_profile("ci", max_examples=100, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("deep", max_examples=1000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("QDSL_HYPOTHESIS_PROFILE", "ci"))

# suite name -> executions this session (the reliability suites' counts)
SUITE_COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="session")
def suite_counts() -> Counter[str]:
    return SUITE_COUNTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SUITE_COUNTS:
        profile = settings.get_current_profile_name()
        terminalreporter.write_sep("-", f"reliability suites (hypothesis profile {profile})")
        for name, count in sorted(SUITE_COUNTS.items()):
            terminalreporter.write_line(f"{name}: {count} executions")


# The second deployment (support tickets) and its databases.
pytest_plugins = ["deployments.fixtures", "deployments.shop", "deployments.agency"]

DEFAULT_PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_FIXTURES = frozenset(
    {"pg_url", "pg_engine", "pg_admin_url", "pg_database_factory", "pg_refs_url", "pg_refs_engine"}
)


@pytest.fixture(autouse=True)
def _isolated_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "qdsl-state"
    monkeypatch.setenv("QDSL_STATE_DIR", str(state))
    monkeypatch.delenv("QDSL_DATABASE_URL", raising=False)
    # No test may depend on a statement finishing within the production default
    # (5 s) on a loaded machine; a test of timeouts sets its own.
    monkeypatch.setenv("QDSL_STATEMENT_TIMEOUT_MS", "600000")
    return state


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & PG_FIXTURES:
            item.add_marker(pytest.mark.pg)


# -- SQLite ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("qdsl-sqlite") / "demo.sqlite3"
    url = f"sqlite+pysqlite:///{path}"
    ensure_demo(url)
    return url


@pytest.fixture(scope="session")
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    engine = make_engine(sqlite_url)
    yield engine
    engine.dispose()


# -- PostgreSQL ------------------------------------------------------------------------


def _pg_unavailable(reason: str) -> None:
    if os.environ.get("QDSL_REQUIRE_PG") == "1":
        pytest.fail(f"PostgreSQL required (QDSL_REQUIRE_PG=1) but unavailable: {reason}")
    pytest.skip(f"PostgreSQL unavailable: {reason}")


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    url = normalize_url(os.environ.get("QDSL_TEST_PG_URL") or DEFAULT_PG_ADMIN_URL)
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        first_line = (str(exc).strip().splitlines() or [""])[0]
        _pg_unavailable(f"{make_url(url).render_as_string()}: {type(exc).__name__}: {first_line}")
    finally:
        engine.dispose()
    return url


@pytest.fixture(scope="session")
def pg_database_factory(pg_admin_url: str) -> Iterator[Callable[[], str]]:
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    created: list[str] = []

    def create() -> str:
        name = f"qdsl_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            # The name is generated here from hex digits, not user input.
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        created.append(name)
        return make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)

    yield create
    with admin.connect() as conn:
        for name in created:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def pg_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    ensure_demo(url)
    return url


@pytest.fixture(scope="session")
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url)
    yield engine
    engine.dispose()


# -- both dialects ---------------------------------------------------------------------


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_url(dialect: str, request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("sqlite_url" if dialect == "sqlite" else "pg_url"))


@pytest.fixture
def engine(dialect: str, request: pytest.FixtureRequest) -> Engine:
    fixture = "sqlite_engine" if dialect == "sqlite" else "pg_engine"
    found = request.getfixturevalue(fixture)
    assert isinstance(found, Engine)
    return found
