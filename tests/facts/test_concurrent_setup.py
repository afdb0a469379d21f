"""Parallel first calls (agent hosts start several qdsl steps at once) set up exactly once."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from qdsl.facts.db import make_engine, setup_lock
from qdsl.facts.demo.data import DEMO_TENANTS, build_demo
from qdsl.facts.demo.setup import DemoStatus, ensure_demo


def _race(url: str, workers: int = 3) -> list[DemoStatus]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda _: ensure_demo(url, count_rows=True), range(workers)))


def _check(results: list[DemoStatus]) -> None:
    seeded = [t for r in results for t in r.seeded_tenants]
    assert sorted(seeded) == sorted(DEMO_TENANTS)  # every tenant seeded by exactly one caller
    total = build_demo().total_rows()
    assert all(sum(r.rows.values()) == total for r in results)


def test_parallel_first_calls_on_sqlite(tmp_path: Path) -> None:
    _check(_race(f"sqlite:///{tmp_path / 'race.sqlite3'}"))


def test_parallel_first_calls_on_postgresql(pg_database_factory: Callable[[], str]) -> None:
    _check(_race(pg_database_factory()))


# Longer than the engines' SQLite busy timeout (5 s), as a first seeding on a
# loaded machine can be.
SEEDING_S = 7.0


def test_a_first_call_waits_out_a_seeding_longer_than_the_busy_timeout(tmp_path: Path) -> None:
    """A process seeding the demo holds the file's write lock; another first call
    that finds it locked waits on the setup lock instead of failing
    `database/transient` ("database is locked") when its busy timeout runs out."""
    path = tmp_path / "slow.sqlite3"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    holding = threading.Event()

    def slow_seeder() -> None:
        with setup_lock(engine):
            raw = sqlite3.connect(path, isolation_level=None)
            try:
                raw.execute("PRAGMA locking_mode=EXCLUSIVE")
                raw.execute("BEGIN EXCLUSIVE")
                raw.execute("CREATE TABLE seeding_in_progress (x INTEGER)")
                holding.set()
                time.sleep(SEEDING_S)
                raw.execute("ROLLBACK")
            finally:
                raw.close()

    seeder = threading.Thread(target=slow_seeder)
    seeder.start()
    try:
        assert holding.wait(60)
        started = time.monotonic()
        status = ensure_demo(url, count_rows=True)
        waited = time.monotonic() - started
    finally:
        seeder.join()
        engine.dispose()
    assert sorted(status.seeded_tenants) == sorted(DEMO_TENANTS)
    assert sum(status.rows.values()) == build_demo().total_rows()
    assert waited >= SEEDING_S / 2  # it did meet the lock
