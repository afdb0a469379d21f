"""Benchmark per-tenant value linking: the ValueSource's cost per question (issue 8, item 4).

    .venv/bin/python -m benchmarks.bench_values [--quick] [--skip-pg] [--admin-url URL]

On the embedded SQLite demo (tenant t1) and on a synthetic deployment (one
tenant with 50,000 shipments, 2,000 distinct carriers and 2,000 customers
marked link_values, 40 cities), measured side by side in one run:

* cached: `values_for` served from the in-process LRU (every question after
  the first within the TTL);
* persisted: the LRU empty, the `value_index` table current (the first
  question of a one-process-per-call CLI after `qdsl index refresh`);
* first use: nothing persisted (scan of the deployer's table + write);

beside `plan_and_answer` on the same demo database, for scale. The
deployment runs on SQLite and, unless --skip-pg, on a throwaway PostgreSQL
database (--admin-url), where the value index is read as `qdsl_reader` in a
tenant-bound read-only transaction. Prints a Markdown table of medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks.dataset import throwaway_pg

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
ROWS: list[tuple[str, str, str]] = []


def timed(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def _measure(label: str, engine: sa.Engine, catalog: Any, tenant: str, repeat: int) -> None:
    from qdsl.facts.index_state import VALUES
    from qdsl.facts.tables import index_state, value_index
    from qdsl.facts.value_index import DatabaseValues, forget

    def drop_index() -> None:
        with engine.begin() as conn:
            conn.execute(value_index.delete())
            conn.execute(index_state.delete().where(index_state.c.kind == VALUES))

    def first_use() -> None:
        drop_index()
        forget(engine)
        t0 = time.perf_counter()
        DatabaseValues(engine, catalog).values_for(tenant)
        samples.append(time.perf_counter() - t0)

    samples: list[float] = []
    for _ in range(max(3, repeat // 4)):
        first_use()
    first = statistics.median(samples)

    def persisted() -> None:
        forget(engine)
        DatabaseValues(engine, catalog).values_for(tenant)

    source = DatabaseValues(engine, catalog)
    source.values_for(tenant)
    n = len(source.values_for(tenant))
    ROWS.append((label, "values linked", str(n)))
    ROWS.append((label, "first use (scan + persist)", _ms(first)))
    ROWS.append((label, "persisted (LRU empty)", _ms(timed(persisted, repeat))))
    cached = timed(lambda: source.values_for(tenant), repeat * 20)
    ROWS.append((label, "cached (LRU hit)", _ms(cached)))


def bench_demo(repeat: int) -> None:
    from qdsl import plan_and_answer
    from qdsl.api import demo_engine
    from qdsl.dsl.catalog import demo_catalog

    engine = demo_engine()
    _measure("demo t1", engine, demo_catalog(), "t1", repeat)
    question = "Which tasks are assigned to Li Wei?"
    plan_and_answer(question, tenant_id="t1")
    median = timed(lambda: plan_and_answer(question, tenant_id="t1"), repeat)
    ROWS.append(("demo t1", "plan_and_answer (for scale)", _ms(median)))


SHIP_TOML = """
[entities.shipment]
table = "shipments"
id = "ship_no"
tenant = "org"
label = "customer"
text_search = ["customer", "body"]
query_types = ["existence", "count", "list"]

[entities.shipment.fields.carrier]
column = "carrier"
type = "text"
link_values = true

[entities.shipment.fields.customer]
column = "customer"
type = "text"
link_values = true

[entities.shipment.fields.city]
column = "city"
type = "text"
"""


def bench_deployment(url: str, repeat: int, rows: int) -> None:
    import tomllib

    from qdsl.dsl.catalog import catalog_from_mapping
    from qdsl.facts.db import make_engine, upgrade

    upgrade(url)
    engine = make_engine(url)
    meta = sa.MetaData()
    table = sa.Table(
        "shipments",
        meta,
        sa.Column("org", sa.String(64), primary_key=True),
        sa.Column("ship_no", sa.String(64), primary_key=True),
        sa.Column("customer", sa.String(200)),
        sa.Column("carrier", sa.String(100)),
        sa.Column("city", sa.String(100)),
        sa.Column("body", sa.Text()),
        sa.Index("ix_ship_carrier", "org", "carrier"),
        sa.Index("ix_ship_customer", "org", "customer"),
        sa.Index("ix_ship_city", "org", "city"),
    )
    meta.create_all(engine)
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            # the value index reads the deployer's table as the executor does
            conn.execute(sa.text("GRANT SELECT ON shipments TO qdsl_reader"))
        conn.execute(
            table.insert(),
            [
                {
                    "org": org,
                    "ship_no": f"S{i}",
                    "customer": f"Customer {i % 2000}",
                    "carrier": f"Carrier {i % 2000}",
                    "city": f"City {i % 40}",
                    "body": "冷链 运输",
                }
                for org in ("acme", "zeta")
                for i in range(rows)
            ],
        )
    catalog = catalog_from_mapping(tomllib.loads(SHIP_TOML))
    _measure(f"{rows:,} shipments, {engine.dialect.name}", engine, catalog, "acme", repeat)
    engine.dispose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_values")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--admin-url", default=ADMIN_URL)
    ap.add_argument("--skip-pg", action="store_true")
    args, _unknown = ap.parse_known_args(argv or [])
    repeat = 5 if args.quick else 20
    rows = 5_000 if args.quick else 50_000
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["QDSL_STATE_DIR"] = tmp
        bench_demo(repeat)
        bench_deployment(f"sqlite+pysqlite:///{Path(tmp) / 'ship.sqlite3'}", repeat, rows)
        if not args.skip_pg:
            try:
                with throwaway_pg(args.admin_url) as url:
                    bench_deployment(url, repeat, rows)
            except sa.exc.OperationalError as exc:
                print(f"PostgreSQL skipped: {type(exc).__name__}", file=sys.stderr)
    print(f"value linking, {started:%Y-%m-%d}; medians\n")
    print("| data | measure | value |\n| --- | --- | --- |")
    for label, what, value in ROWS:
        print(f"| {label} | {what} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
