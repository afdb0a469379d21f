"""`facts load` beside a plain bulk load of the same rows (issue 10 item 4).

    python -m benchmarks.bench_facts_load [--quick] [--rows N] [--pg-rows N] [--repeats N]
        [--no-pg]

Per dialect, into fresh databases after `qdsl db upgrade`, interleaved over
repeats (a new pair of databases each): `load_facts` (validate against the
catalog, normalize, stage, upsert on the natural key, one transaction) and
the plain load it is measured against: a COPY (PostgreSQL) or one
executemany (SQLite) of the same, already normalized rows straight into
semantic_facts. Then `load_facts` of the same
rows again (every row found unchanged). Defaults are small so `python -m
benchmarks` stays quick: 20,000 rows; the issue's sizes are `--rows 100000
--pg-rows 1000000`. PostgreSQL is QDSL_TEST_PG_URL (default the local test
server); without one it is skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks import harness as H
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.load import load_facts
from qdsl.facts.tables import semantic_facts

PG_ADMIN = os.environ.get("QDSL_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
THEMES = ("A股", "Ａ－ｓｈａｒｅ", "港股", " Hong  Kong equities ", "美股", "US Stocks")


def fact_rows(n: int) -> list[dict[str, Any]]:
    base = datetime(2026, 10, 1, tzinfo=UTC)
    return [
        {
            "tenant_id": f"t{i % 8}",
            "entity_type": "project" if i % 3 else "doc",
            "entity_id": str(i // 2),
            "predicate": "market_theme" if i % 3 else "topic",
            "value_text": THEMES[i % len(THEMES)],
            "source_type": "crm",
            "source_ref": f"crm:{i}",
            "confidence": 0.9,
            "observed_at": base + timedelta(minutes=i % 1000),
        }
        for i in range(n)
    ]


def _plain(engine: sa.Engine, rows: list[dict[str, Any]]) -> None:
    """The baseline: the rows as they are, normalized, in one COPY / executemany."""
    cols = [c.name for c in semantic_facts.c if c.name != "id"]
    data = [
        tuple(normalize_text(r["value_text"]) if c == "value_norm" else r.get(c) for c in cols)
        for r in rows
    ]
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            from psycopg import sql

            raw = conn.connection.driver_connection
            assert raw is not None
            stmt = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(semantic_facts.name),
                sql.SQL(", ").join(sql.Identifier(c) for c in cols),
            )
            with raw.cursor() as cur, cur.copy(stmt) as copy:
                for record in data:
                    copy.write_row(record)
        else:
            conn.execute(semantic_facts.insert(), [dict(zip(cols, d, strict=True)) for d in data])


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _run(label: str, url_for: Callable[[], str], n: int, repeats: int) -> list[H.Ratio]:
    """Per repeat two fresh databases, the plain load and `load_facts` in alternating
    order, then `load_facts` of the same rows again."""
    rows = fact_rows(n)
    catalog = demo_catalog()
    plain, loaded, again = H.Samples(), H.Samples(), H.Samples()
    for r in range(repeats):
        plain_url, load_url = url_for(), url_for()
        for url in (plain_url, load_url):
            upgrade(url)
        plain_engine, load_engine = make_engine(plain_url), make_engine(load_url)
        try:
            load = partial(load_facts, rows, engine=load_engine, catalog=catalog)
            steps: list[tuple[H.Samples, Callable[[], object]]] = [
                (plain, partial(_plain, plain_engine, rows)),
                (loaded, load),
            ]
            for samples, step in steps if r % 2 == 0 else steps[::-1]:
                samples.repeats.append([_timed(step)])
            again.repeats.append([_timed(load)])
        finally:
            plain_engine.dispose()
            load_engine.dispose()
    bulk = "COPY" if label == "postgresql" else "executemany"
    return [
        H.compare(f"{label}, {n:,} rows: facts load", "load_facts", bulk, loaded, plain, goal=None),
        H.compare(
            f"{label}, {n:,} rows: facts load again (all unchanged)",
            "load_facts",
            bulk,
            again,
            plain,
            goal=None,
        ),
    ]


def _pg_factory(created: list[str]) -> Callable[[], str] | None:
    admin = make_engine(PG_ADMIN, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError:
        admin.dispose()
        return None

    def create() -> str:
        name = f"qdsl_bench_{uuid.uuid4().hex[:10]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))  # generated hex name
        created.append(name)
        return sa.make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)

    return create


def _drop(created: list[str]) -> None:
    if not created:
        return
    admin = make_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in created:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_facts_load")
    parser.add_argument("--rows", type=int, default=20_000, help="SQLite rows")
    parser.add_argument("--pg-rows", type=int, default=20_000, help="PostgreSQL rows")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--quick", action="store_true", help="500 rows per dialect, once")
    parser.add_argument("--repeats", type=int, default=3)
    args, _ = parser.parse_known_args(argv)
    if args.quick:
        args.rows = args.pg_rows = 500
    repeats = 1 if args.quick else args.repeats
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(1_000))
        ratios += _run(
            "sqlite",
            lambda: f"sqlite:///{Path(tmp) / f'b{next(counter)}.sqlite3'}",
            args.rows,
            repeats,
        )
    note = ""
    created: list[str] = []
    try:
        factory = None if args.no_pg else _pg_factory(created)
        if factory is None and not args.no_pg:
            note = f"postgresql skipped: no server at {PG_ADMIN}"
        elif factory is not None:
            ratios += _run("postgresql", factory, args.pg_rows, repeats)
    finally:
        _drop(created)
    H.print_ratios("`facts load` vs a plain bulk load of the same rows", ratios, note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
