"""Parallel first calls (agent hosts start several qdsl steps at once) set up exactly once."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
