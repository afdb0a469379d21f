"""Per-tenant value linking against linking without an index (issue 8, item 4).

    python -m benchmarks.bench_values [--quick] [--skip-pg] [--admin-url URL] [--repeats N]

On the embedded SQLite demo (tenant t1) and on a synthetic deployment (one
tenant with 50,000 shipments, 2,000 distinct carriers and 2,000 customers
marked link_values, 40 cities), qdsl's `ValueSource` is measured side by side
with what a linker without an index runs for every question: the same
`SELECT DISTINCT column ... WHERE tenant = :t LIMIT bound + 1` per linkable
field on the deployer's table, in the same tenant-bound read-only transaction
(on PostgreSQL as `qdsl_reader`), giving the same values. Three ways qdsl
answers, each interleaved with that scan:

* cached: `values_for` served from the in-process LRU (every question after
  the first within the TTL); goal ≥ 10× faster than scanning;
* persisted: the LRU empty, the `value_index` table current (the first
  question of a one-process-per-call CLI after `qdsl index refresh`); goal:
  not slower than the scan it replaces (≥ 1× faster);
* first use: nothing persisted (the scan, plus writing the index); no goal,
  a one-time cost per tenant (the index is dropped before each call, untimed).

The deployment runs on SQLite and, unless --skip-pg, on a throwaway
PostgreSQL database (--admin-url).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir
from benchmarks.dataset import throwaway_pg

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SCAN = "DISTINCT scan per question"


def _timed_pair(
    setup: Callable[[], object],
    qdsl: Callable[[], object],
    alt: Callable[[], object],
    repeats: int,
) -> tuple[H.Samples, H.Samples]:
    """Interleaved as the harness does, with `setup` (untimed) before each qdsl call."""
    a, b = H.Samples(), H.Samples()
    for r in range(repeats):
        for index in (0, 1) if r % 2 == 0 else (1, 0):
            if index == 0:
                setup()
            t0 = time.perf_counter_ns()
            (qdsl if index == 0 else alt)()
            elapsed = (time.perf_counter_ns() - t0) / 1e9
            (a if index == 0 else b).repeats.append([elapsed])
    return a, b


def _measure(
    label: str, engine: sa.Engine, catalog: Any, tenant: str, repeats: int
) -> list[H.Ratio]:
    from qdsl.facts.index_state import VALUES
    from qdsl.facts.tables import index_state, value_index
    from qdsl.facts.value_index import (
        DatabaseValues,
        forget,
        link_fields,
        reader,
        scan_field,
        tenant_values,
    )

    fields = link_fields(catalog)

    def scan() -> object:
        with reader(engine, tenant) as conn:
            found = {(lf.entity, lf.field): scan_field(conn, tenant, lf) for lf in fields}
        return tenant_values(fields, found)

    def drop_index() -> None:
        with engine.begin() as conn:
            conn.execute(value_index.delete())
            conn.execute(index_state.delete().where(index_state.c.kind == VALUES))
        forget(engine)

    def persisted() -> object:
        forget(engine)
        return DatabaseValues(engine, catalog).values_for(tenant)

    source = DatabaseValues(engine, catalog)
    values = source.values_for(tenant)
    if values != scan():
        raise AssertionError(f"{label}: the value index and the scan disagree")
    n = f"{label}, {len(values):,} values"
    first_a, first_b = _timed_pair(drop_index, lambda: source.values_for(tenant), scan, repeats)
    source.values_for(tenant)  # index current again
    return [
        H.measure(
            f"{n}: cached (LRU hit)",
            ("values_for", lambda: source.values_for(tenant)),
            (SCAN, scan),
            H.faster(10),
            repeats=repeats,
            inner=5,
        ),
        H.measure(
            f"{n}: persisted (LRU empty)",
            ("values_for", persisted),
            (SCAN, scan),
            H.faster(1),
            repeats=repeats,
        ),
        H.compare(
            f"{n}: first use (scan + persist)", "values_for", SCAN, first_a, first_b, goal=None
        ),
    ]


def bench_demo(repeats: int) -> list[H.Ratio]:
    from qdsl.api import demo_engine
    from qdsl.dsl.catalog import demo_catalog

    return _measure("demo t1", demo_engine(), demo_catalog(), "t1", repeats)


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


def bench_deployment(url: str, repeats: int, rows: int) -> list[H.Ratio]:
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
    try:
        label = f"{rows:,} shipments, {engine.dialect.name}"
        return _measure(label, engine, catalog, "acme", repeats)
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_values", __doc__)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--repeats", type=int, default=15)
    args, _unknown = parser.parse_known_args(argv or [])
    repeats = 2 if args.quick else args.repeats
    rows = 5_000 if args.quick else 50_000
    ratios: list[H.Ratio] = []
    with state_dir() as tmp:
        ratios += bench_demo(repeats)
        ratios += bench_deployment(f"sqlite+pysqlite:///{tmp / 'ship.sqlite3'}", repeats, rows)
        if not args.skip_pg:
            try:
                with throwaway_pg(args.admin_url) as url:
                    ratios += bench_deployment(url, repeats, rows)
            except sa.exc.OperationalError as exc:
                print(f"PostgreSQL skipped: {type(exc).__name__}", file=sys.stderr)
    H.print_ratios("Value linking: qdsl's ValueSource vs a DISTINCT scan per question", ratios)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
