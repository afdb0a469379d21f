"""The executor against the raw driver running the exact SQL it ran.

Per plan, bound once (the executor's cost per cached plan): `execute` against
the statements it sent to the driver (captured from SQLAlchemy, parameters as
the driver received them; `benchmarks.rawdb`), replayed with the raw driver in
the same process, interleaved, on the same database:

1. SQLite, the embedded demo (tenant t1): each demo plan, and all six per call;
   raw sqlite3 on a read-only connection.
2. SQLite, generated data (`benchmarks.dataset`): 1, 20 and 200 result rows
   (a mid-sized tenant).
3. PostgreSQL, a throwaway database per size (10k, 100k, 1M facts; Zipf-skewed
   tenants): facts-first questions over tenants of every size, p50 and p95
   against raw psycopg prepared (`prepare=True`), and against the same raw
   statements inside the executor's session guards (read-only repeatable-read
   transaction, reader role so RLS applies, tenant setting, timeout); then 1,
   20 and 200 result rows at the largest size. The server is QDSL_TEST_PG_URL
   (default the local test server); without one this part says so and stops.

    python -m benchmarks.bench_executor [--quick] [--sizes 10000,100000,1000000]
        [--repeats N] [--skip-pg] [--admin-url URL]
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks import harness as H
from benchmarks.dataset import (
    Shape,
    load_pg,
    load_sqlite,
    pg_reachable,
    sample_ranks,
    tenant,
    throwaway_pg,
)
from benchmarks.rawdb import (
    Statement,
    captured,
    pg_connect,
    pg_run,
    pg_run_guarded,
    sqlite_connect,
    sqlite_run,
)
from benchmarks.workload import Case, demo_cases, theme_list
from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine

ADMIN_URL = os.environ.get("QDSL_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
TIMEOUT_MS = 10_000


def bind(case: Case, catalog: Catalog, tenant_id: str) -> BoundPlan:
    bound = normalize(load_plan(case.text), catalog, PlanContext(tenant_id=tenant_id)).bound
    assert bound is not None, case.label
    return bound


@dataclass(frozen=True)
class Job:
    """One plan for one tenant: bound, and the statements it ran."""

    label: str
    tenant: str
    bound: BoundPlan
    statements: list[Statement]
    rows: int  # result rows of the plan


def jobs(
    engine: sa.Engine, catalog: Catalog, pairs: list[tuple[Case, str]], **kw: Any
) -> list[Job]:
    out = []
    for case, tenant_id in pairs:
        bound = bind(case, catalog, tenant_id)

        def run(b: BoundPlan = bound, t: str = tenant_id) -> ExecutionResult:
            return execute(b, catalog, engine, t, timeout_ms=TIMEOUT_MS, **kw)

        rows = len(run().rows)  # also warms: statement caches, the reader-role check
        out.append(Job(case.label, tenant_id, bound, captured(engine, run), rows))
    return out


# -- SQLite -------------------------------------------------------------------------------


@contextmanager
def state_dir() -> Iterator[Path]:
    """A temporary QDSL_STATE_DIR (the demo database lives there), restored after."""
    before = os.environ.get("QDSL_STATE_DIR")
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as tmp:
        os.environ["QDSL_STATE_DIR"] = tmp
        try:
            yield Path(tmp)
        finally:
            if before is None:
                os.environ.pop("QDSL_STATE_DIR", None)
            else:
                os.environ["QDSL_STATE_DIR"] = before


def sqlite_demo(repeats: int, inner: int) -> list[H.Ratio]:
    from qdsl.api import demo_engine
    from qdsl.facts.demo import DEMO_NOW

    catalog = demo_catalog()
    engine = demo_engine()
    path = str(engine.url.database)
    raw = sqlite_connect(path)
    found = jobs(engine, catalog, [(c, "t1") for c in demo_cases()], now=DEMO_NOW)

    def qdsl_one(job: Job) -> Callable[[], object]:
        return lambda: execute(
            job.bound, catalog, engine, job.tenant, timeout_ms=TIMEOUT_MS, now=DEMO_NOW
        )

    out = []
    for job in found:
        out.append(
            H.measure(
                job.label,
                ("execute", qdsl_one(job)),
                ("sqlite3", lambda j=job: sqlite_run(raw, j.statements)),  # type: ignore[misc]
                H.at_most(1.5),
                repeats=repeats,
                inner=inner,
            )
        )
    everything = H.measure(
        "executor per cached plan, SQLite demo (all six plans)",
        ("execute", lambda: [qdsl_one(j)() for j in found]),
        ("sqlite3", lambda: [sqlite_run(raw, j.statements) for j in found]),
        H.at_most(1.5),
        repeats=repeats,
        inner=inner,
    )
    raw.close()
    return [*out, H.record("sqlite_executor", everything)]


def row_cases() -> list[Case]:
    return [theme_list("A股", n) for n in (1, 20, 200)]


def rows_tenant(shape: Shape) -> str:
    """A mid-sized tenant (rank 10: ~1.5% of the rows, over 200 A股 projects from
    100k facts up), so the rows' cost shows beside the query's own."""
    return tenant(min(10, shape.tenants - 1))


def per_row(found: list[Job], ratios: list[H.Ratio]) -> str:
    """qdsl's time over the driver's, split into a fixed part and a part per result row
    (a line through the runs with the fewest and the most rows)."""
    (j1, r1), (j2, r2) = (found[0], ratios[0]), (found[-1], ratios[-1])
    extra1, extra2 = r1.a - r1.b, r2.a - r2.b
    if j2.rows == j1.rows:
        return f"results of {j1.rows} rows only: no per-row figure"
    slope = (extra2 - extra1) / (j2.rows - j1.rows)
    return (
        f"qdsl's time over the driver's: ≈ {H.fmt_time(extra1 - slope * j1.rows)} per call "
        f"+ ≈ {H.fmt_time(slope)} per result row ({j1.rows} to {j2.rows} rows)"
    )


def sqlite_rows(shape: Shape, repeats: int, inner: int) -> tuple[list[H.Ratio], str]:
    catalog = demo_catalog()
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as tmp:
        path = str(Path(tmp) / "rows.sqlite3")
        load_sqlite(path, shape)
        engine = make_engine(f"sqlite:///{path}")
        raw = sqlite_connect(path)
        out = []
        found = jobs(engine, catalog, [(c, rows_tenant(shape)) for c in row_cases()])
        for job in found:
            out.append(
                H.measure(
                    f"{job.rows} result rows",
                    ("execute", lambda j=job: execute(  # type: ignore[misc]
                        j.bound, catalog, engine, j.tenant, timeout_ms=TIMEOUT_MS
                    )),
                    ("sqlite3", lambda j=job: sqlite_run(raw, j.statements)),  # type: ignore[misc]
                    H.at_most(1.5),
                    repeats=repeats,
                    inner=inner,
                )
            )
        raw.close()
        engine.dispose()
    return out, per_row(found, out)


# -- PostgreSQL ---------------------------------------------------------------------------


def pg_questions() -> list[Case]:
    """Facts-first questions (their facts EXISTS carries the work)."""
    cases = demo_cases()
    return [cases[0], cases[1], theme_list("美股", 20)]


def pg_compare(url: str, found: list[Job], repeats: int, goals: bool) -> list[H.Ratio]:
    catalog = demo_catalog()
    engine = make_engine(url)
    raw = pg_connect(url, guarded=False)
    guarded = pg_connect(url, guarded=True)
    try:
        samples = H.interleaved_over(
            found,
            [
                lambda j: execute(j.bound, catalog, engine, j.tenant, timeout_ms=TIMEOUT_MS),
                lambda j: pg_run(raw, j.statements),
                lambda j: pg_run_guarded(guarded, j.tenant, j.statements, TIMEOUT_MS),
            ],
            repeats=repeats,
        )
    finally:
        raw.close()
        guarded.close()
        engine.dispose()
    qdsl, bare, fenced = samples
    raw_goal = H.at_most(1.5) if goals else None
    guard_goal = H.at_most(1.15) if goals else None
    raw_name, guarded_name = "psycopg prepared", "raw + guards"
    return [
        H.compare("p50 vs raw", "execute", raw_name, qdsl, bare, goal=raw_goal),
        H.compare("p95 vs raw", "execute", raw_name, qdsl, bare, goal=raw_goal, which="p95"),
        H.compare("p50 vs raw + guards", "execute", guarded_name, qdsl, fenced, goal=guard_goal),
        H.compare(
            "p95 vs raw + guards", "execute", guarded_name, qdsl, fenced, goal=guard_goal,
            which="p95",
        ),
    ]


def pg_size(
    admin_url: str, shape: Shape, repeats: int, rows: bool
) -> tuple[list[H.Ratio], str]:
    catalog = demo_catalog()
    label = f"{shape.facts:,} facts"
    with throwaway_pg(admin_url) as url:
        load_pg(url, shape)
        engine = make_engine(url)
        try:
            ranks = sample_ranks(shape.tenants)
            found = jobs(
                engine, catalog, [(c, tenant(r)) for c in pg_questions() for r in ranks]
            )
            by_rows = (
                jobs(engine, catalog, [(c, rows_tenant(shape)) for c in row_cases()])
                if rows
                else []
            )
        finally:
            engine.dispose()
        out = [
            H.Ratio(**{**r.__dict__, "path": f"facts-first, {label}: {r.path}"})
            for r in pg_compare(url, found, repeats, goals=True)
        ]
        vs_raw = []
        for job in by_rows:
            pair = pg_compare(url, [job], repeats * 4, goals=True)[::2]
            vs_raw.append(pair[0])
            for r in pair:
                out.append(
                    H.Ratio(**{**r.__dict__, "path": f"{job.rows} result rows, {label}: {r.path}"})
                )
    return out, (per_row(by_rows, vs_raw) if by_rows else "")


def postgres(
    admin_url: str, sizes: list[int], tenants: int, repeats: int
) -> tuple[list[H.Ratio], str]:
    out: list[H.Ratio] = []
    note = ""
    for i, facts in enumerate(sizes):
        largest = i == len(sizes) - 1
        ratios, found = pg_size(admin_url, Shape(facts, tenants), repeats, rows=largest)
        out += ratios
        note = note or found
        if largest:
            for key, r in zip(
                ("pg_p50_raw", "pg_p95_raw", "pg_p50_guards", "pg_p95_guards"), ratios, strict=False
            ):
                H.record(key, r)
    return out, note


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_executor", __doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="facts per database")
    parser.add_argument("--tenants", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    args, _ = parser.parse_known_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    repeats, inner, tenants = args.repeats, 10, args.tenants
    if args.quick:
        sizes, repeats, inner, tenants = [2000], 2, 2, 20
    with state_dir():
        H.print_ratios("Executor on the SQLite demo vs raw sqlite3", sqlite_demo(repeats, inner))
    by_rows, note = sqlite_rows(Shape(2000 if args.quick else 200_000, tenants), repeats, inner)
    H.print_ratios(
        "Executor on SQLite by result rows (generated data, a mid-sized tenant) vs raw sqlite3",
        by_rows,
        note,
    )
    if args.skip_pg:
        return 0
    why = pg_reachable(args.admin_url)
    if why is not None:
        print(f"\nPostgreSQL part skipped: no server at {args.admin_url} ({why})")
        return 0
    ratios, note = postgres(args.admin_url, sizes, tenants, repeats)
    H.print_ratios(
        f"Executor on PostgreSQL vs raw psycopg (prepare=True), {tenants} Zipf-skewed tenants",
        ratios,
        f"facts-first rows pool {len(pg_questions())} questions × tenants of ranks "
        f"{sample_ranks(tenants)}; result rows: a mid-sized tenant (rank 10), raw "
        f"alternatives as above; {note}.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
