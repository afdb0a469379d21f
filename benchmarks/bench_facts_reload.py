"""Does reloading an unchanged facts file take time linear in its size? (issue 25, R1)

    python -m benchmarks.bench_facts_reload [--quick] [--sizes N,N,...]
        [--shapes NAME,...] [--no-pg] [--no-sqlite]

For each dialect, file shape and size: a fresh database after `qdsl db
upgrade`, `load_facts` of the rows (the first load), then `load_facts` of the
same rows again (the reload: every row found unchanged), each timed once.
Prints one table: the two times, the reload as a multiple of the first load
(the goal: at most 2×), and the reload's time per row as a multiple of the
smallest size's (1.0 is linear; a quadratic reload grows with the size).

Shapes (what made the reload quadratic is the key without a source_ref):

* `source_ref`: every fact with its own source_ref (bench_facts_load's rows);
* `no_source_ref`: one value per entity, no source_ref (most exports);
* `many_values`: 100 values per entity (a many-valued predicate), no source_ref.

Defaults are the issue's sizes (20,000, 80,000 and 1,000,000 rows); `--quick`
runs 500 and 2,000 rows to prove the script runs. PostgreSQL is
QDSL_TEST_PG_URL (default the local test server); without one it is skipped.
Nothing here asserts a time: read the table.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks.bench_facts_load import PG_ADMIN
from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.load import load_facts

SHAPES = ("source_ref", "no_source_ref", "many_values")
GOAL = 2.0


def rows_of(shape: str, n: int) -> list[dict[str, Any]]:
    per_entity = 100 if shape == "many_values" else 1
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "tenant_id": f"t{i % 4}",
            "entity_type": "project",
            "entity_id": str(i // (4 * per_entity)),
            "predicate": "market_theme",
            "value_text": f"theme {i % 97}" if per_entity == 1 else f"theme {i}",
            "confidence": 0.9,
        }
        if shape == "source_ref":
            row["source_ref"] = f"crm:{i}"
        rows.append(row)
    return rows


@contextmanager
def _sqlite_urls() -> Iterator[Callable[[], str]]:
    with tempfile.TemporaryDirectory() as tmp:
        yield lambda: f"sqlite:///{Path(tmp) / f'{uuid.uuid4().hex[:8]}.sqlite3'}"


@contextmanager
def _pg_urls() -> Iterator[Callable[[], str] | None]:
    admin = make_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError:
        admin.dispose()
        yield None
        return
    created: list[str] = []

    def create() -> str:
        name = f"qdsl_bench_{uuid.uuid4().hex[:10]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))  # generated hex name
        created.append(name)
        return sa.make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)

    try:
        yield create
    finally:
        with admin.connect() as conn:
            for name in created:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def measure(url: str, rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(first load, reload) seconds into a fresh database at `url`."""
    upgrade(url)
    engine = make_engine(url)
    catalog = demo_catalog()
    try:
        first = _timed(lambda: load_facts(rows, engine=engine, catalog=catalog))
        again = _timed(lambda: load_facts(rows, engine=engine, catalog=catalog))
    finally:
        engine.dispose()
    return first, again


def _table(results: list[tuple[str, str, int, float, float]]) -> str:
    lines = [
        "| dialect | shape | rows | first load | reload | reload / first "
        "| reload per row vs smallest |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    smallest: dict[tuple[str, str], float] = {}
    for dialect, shape, n, first, again in results:
        per_row = again / n
        base = smallest.setdefault((dialect, shape), per_row)
        ratio = again / first
        mark = "" if ratio <= GOAL else " (over the goal)"
        lines.append(
            f"| {dialect} | {shape} | {n:,} | {first:.2f} s | {again:.2f} s | "
            f"{ratio:.2f}×{mark} | {per_row / base:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_facts_reload")
    parser.add_argument("--sizes", default="20000,80000,1000000")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--quick", action="store_true", help="500 and 2,000 rows")
    args, _ = parser.parse_known_args(argv)
    # a terminated run still drops its throwaway databases (the `finally` blocks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = [500, 2000] if args.quick else [int(s) for s in args.sizes.split(",")]
    shapes = [s for s in args.shapes.split(",") if s in SHAPES]
    results: list[tuple[str, str, int, float, float]] = []
    note = ""
    with _sqlite_urls() as sqlite_url, _pg_urls() as pg_url:
        dialects: list[tuple[str, Callable[[], str]]] = []
        if not args.no_sqlite:
            dialects.append(("sqlite", sqlite_url))
        if pg_url is not None and not args.no_pg:
            dialects.append(("postgresql", pg_url))
        elif not args.no_pg:
            note = f"\npostgresql skipped: no server at {PG_ADMIN}"
        for dialect, url_for in dialects:
            for shape in shapes:
                for n in sizes:
                    first, again = measure(url_for(), rows_of(shape, n))
                    results.append((dialect, shape, n, first, again))
                    print(f"{dialect} {shape} {n}: {first:.2f} s, {again:.2f} s", flush=True)
    print("\n### reload of an unchanged facts file (goal: reload ≤ 2× the first load)\n")
    print(_table(results) + note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
