"""Fixtures for the envelope and ref store tests: a store with an injected clock.

* `make_store`: the file store (its own suites test files, modes, fsyncs).
* `backend` ("file" | "postgresql", the latter marked `pg`) and `make_any_store`:
  a test using them runs once per ref store backend, with the same clock.
* `pg_refs_url`: a fresh PostgreSQL database migrated to head (qdsl's own
  tables, `qdsl_refs` among them), dropped at session end; `pg_refs_engine`
  connects to it as `qdsl_test_ref_writer`, a role that is no superuser and
  holds only what a deployment's application user needs on `qdsl_refs`
  (SELECT, INSERT, DELETE), so row-level security applies to every statement
  the store makes, as it would in production; `pg_refs_admin` is the server's
  superuser, for looking behind the store's back (tampering, probing).
  Roles are cluster-wide: the role is made if missing and never dropped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from store_suites import REF_WRITER, empty_refs_table, writer_engine

from qdsl.envelope.ref_api import RefStoreProtocol
from qdsl.envelope.store import RefStore

T0 = 1_795_000_000_000  # a fixed epoch-ms "now"


class FakeClock:
    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_store(tmp_path: Path, clock: FakeClock) -> Callable[..., RefStore]:
    # grace_ms=0 by default: these stores run on a fake clock, and the cap
    # tests want eviction at once; the grace period has tests of its own.
    def make(
        *, ttl_ms: int = 60_000, max_count: int = 50, max_bytes: int = 10_000_000, grace_ms: int = 0
    ) -> RefStore:
        return RefStore(
            tmp_path / "state",
            ttl_ms=ttl_ms,
            max_count=max_count,
            max_bytes=max_bytes,
            grace_ms=grace_ms,
            clock=clock,
        )

    return make


@pytest.fixture
def files_under() -> Callable[[Path], list[str]]:
    def list_files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    return list_files


@pytest.fixture
def ram_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on tmpfs when there is one, else tmp_path.

    The concurrency and kill -9 suites test processes racing and dying, not
    power loss: on tmpfs their fsyncs cost nothing (20 ms each on this CI
    disk), so they can run thousands of operations in CI.
    """
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="qdsl-refs-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- both backends -----------------------------------------------------------------

@pytest.fixture(scope="session")
def pg_refs_url(pg_database_factory: Callable[[], str]) -> str:
    from qdsl.facts.db import make_engine, upgrade

    url = pg_database_factory()
    upgrade(url)
    admin = make_engine(url)
    try:
        with admin.begin() as conn:
            # The role name is a constant of this module, not input.
            conn.execute(
                text(
                    f"""
                    DO $$
                    BEGIN
                      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{REF_WRITER}') THEN
                        CREATE ROLE {REF_WRITER} NOLOGIN;
                      END IF;
                    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                    END
                    $$
                    """
                )
            )
            conn.execute(text(f"GRANT SELECT, INSERT, DELETE ON qdsl_refs TO {REF_WRITER}"))
    finally:
        admin.dispose()
    return url


@pytest.fixture(scope="session")
def pg_refs_engine(pg_refs_url: str) -> Iterator[Engine]:
    engine = writer_engine(pg_refs_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def pg_refs_admin(pg_refs_url: str) -> Iterator[Engine]:
    from qdsl.facts.db import make_engine

    engine = make_engine(pg_refs_url)
    yield engine
    engine.dispose()


@pytest.fixture(params=["file", pytest.param("postgresql", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_any_store(
    backend: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> Callable[..., RefStoreProtocol]:
    """`make_store` on the test's backend; the PostgreSQL store starts empty."""
    engine: Engine | None = None
    if backend == "postgresql":
        engine = request.getfixturevalue("pg_refs_engine")
        empty_refs_table(request.getfixturevalue("pg_refs_admin"))

    def make(
        *,
        ttl_ms: int = 60_000,
        max_count: int = 50,
        max_bytes: int = 10_000_000,
        grace_ms: int = 0,
        tenant_max_count: int | None = None,
        tenant_max_bytes: int | None = None,
    ) -> RefStoreProtocol:
        given = {"tenant_max_count": tenant_max_count, "tenant_max_bytes": tenant_max_bytes}
        caps = {k: v for k, v in given.items() if v is not None}
        if engine is None:
            return RefStore(
                tmp_path / "state",
                ttl_ms=ttl_ms,
                max_count=max_count,
                max_bytes=max_bytes,
                grace_ms=grace_ms,
                clock=clock,
                **caps,
            )
        from qdsl.envelope.pg_store import PgRefStore

        return PgRefStore(
            engine,
            ttl_ms=ttl_ms,
            max_count=max_count,
            max_bytes=max_bytes,
            grace_ms=grace_ms,
            clock=clock,
            **caps,
        )

    return make


@pytest.fixture
def cli_store_env(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment that selects the test's backend for a `qdsl` command."""
    if backend == "file":
        return {}
    url = request.getfixturevalue("pg_refs_url")
    empty_refs_table(request.getfixturevalue("pg_refs_admin"))
    return {"QDSL_REF_STORE": "postgresql", "QDSL_REF_STORE_URL": url}
