"""Issue 24's goal table, measured side by side in one run on PostgreSQL.

    python -m benchmarks.bench_goals [--quick] [--facts 1000000] [--tenants 200]
        [--rounds 6] [--calls 30] [--repeats 15] [--admin-url URL] [--skip-pg]

A dedicated database is created and dropped (`dataset.throwaway_pg`), loaded
with `--facts` generated facts over Zipf-skewed tenants (`dataset.load_pg`;
1M facts take a few minutes to load on a loaded two-core machine, and the
load's time is printed). Every alternative does the same work as qdsl:

* **16 callers, throughput** and **64 callers, p95**: threads, each with its
  own connection, calling `execute` against raw psycopg running the very
  statements the executor sent (captured: `rawdb`), in the same guards set the
  same way per transaction: READ ONLY and REPEATABLE READ, the reader role
  (row-level security applies), the tenant setting, the statement timeout;
  both prepare server-side from the fifth run on (psycopg's default). The
  plans are the facts-first questions over tenants of every size. Rounds
  alternate the two, the order flipped every round.
* **small tenants, p50**: the same, for the smallest half of the tenants only
  (the demo's tenants would be pooled with the large ones otherwise).
* **a 10,000-row list**: a facts-first list with its evidence for the largest
  tenant (the demo catalog's `max_limit` raised to allow it, as a deployer
  would); client side `execute` against raw psycopg + guards (same statements),
  server side PostgreSQL's own execution time (`EXPLAIN ANALYZE`, in the same
  guards) of qdsl's statements against the plain select returning the same
  rows (the hand-written SQL of the same question, without evidence).
* **2 processes vs 1**: `bench_mcp_workers` on this database (MCP HTTP, the
  PostgreSQL ref store), a mid-sized tenant.
* **`qdsl ask` wall** against `python -c "import sqlalchemy, pydantic, lark,
  click"` (`bench_ask_startup`; SQLite demo, no PostgreSQL needed).

Each row prints its ratio, the spread over rounds or repeats and the verdict;
nothing fails on time. The load average is printed with the table: numbers
from a loaded machine are the machine's as much as qdsl's.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from typing import Any

import psycopg

from benchmarks import bench_ask_startup, bench_mcp_workers
from benchmarks import harness as H
from benchmarks.bench_executor import ADMIN_URL, TIMEOUT_MS, Job, jobs, pg_questions, state_dir
from benchmarks.bench_pooler import Call, _qdsl_calls, _raw_calls, _round
from benchmarks.dataset import Shape, load_pg, pg_reachable, sample_ranks, tenant, throwaway_pg
from benchmarks.rawdb import GUARDS, pg_connect, pg_run_guarded
from benchmarks.workload import Case, theme_list
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine

LIST_ROWS = 10_000
THROUGHPUT = H.at_most(round(1 / 0.7, 2))  # wall per call ≤ 1/0.7: throughput ≥ 0.7×


def _pooled_raw_calls(
    pool: queue.SimpleQueue[psycopg.Connection[Any]], found: list[Job], callers: int
) -> list[Call]:
    """Raw callers sharing the connections of `pool` as qdsl's callers share its
    engine's: a call takes one, waiting if none is free, and gives it back."""

    def caller(i: int) -> Call:
        def call(n: int) -> object:
            job = found[(i + n) % len(found)]
            conn = pool.get()
            try:
                return pg_run_guarded(conn, job.tenant, job.statements, TIMEOUT_MS)
            finally:
                pool.put(conn)

        return call

    return [caller(i) for i in range(callers)]


def callers_compare(
    url: str,
    found: list[Job],
    callers: int,
    rounds: int,
    per_caller: int,
    *,
    connections: int | None = None,
) -> tuple[H.Samples, H.Samples, H.Samples, H.Samples]:
    """Walls per call and every call's latency: qdsl's, then raw's. With
    `connections`, both share that many connections (the server's
    max_connections would not hold two sets of 64)."""
    size = connections or callers
    engine = make_engine(url, pool_size=size, max_overflow=0)
    conns: list[psycopg.Connection[Any]] = []
    try:
        conns = [pg_connect(url, guarded=True) for _ in range(size)]
        if connections is None:
            raw = _raw_calls(conns, found, prepare=True)
        else:
            pool: queue.SimpleQueue[psycopg.Connection[Any]] = queue.SimpleQueue()
            for conn in conns:
                pool.put(conn)
            raw = _pooled_raw_calls(pool, found, callers)
        variants = [_qdsl_calls(engine, found, callers), raw]
        for calls in variants:  # warm: every connection opened, every statement prepared
            _round(calls, max(6, len(found) // callers + 6))
        walls = [H.Samples(), H.Samples()]
        each = [H.Samples(), H.Samples()]
        for r in range(rounds):
            for index in H.rotation(r, 2):
                wall, latencies = _round(variants[index], per_caller)
                walls[index].repeats.append([wall])
                each[index].repeats.append(latencies)
    finally:
        for conn in conns:
            conn.close()
        engine.dispose()
    return walls[0], walls[1], each[0], each[1]


def server_time(conn: psycopg.Connection[Any], tenant_id: str, statements: list[Any]) -> float:
    """PostgreSQL's execution time of `statements` in the executor's guards."""
    conn.execute(GUARDS, (READER_ROLE, tenant_id, str(TIMEOUT_MS)))
    total = 0.0
    for sql, params in statements:
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params).fetchone()
        assert plan is not None
        doc = plan[0] if not isinstance(plan[0], str) else json.loads(plan[0])
        total += float(doc[0]["Execution Time"])
    conn.commit()
    return total / 1000


def wide_catalog(rows: int) -> Catalog:
    """The demo's catalog with room for `rows` in a list: its entities allow 200,
    a deployer lists more by raising `max_limit`, as this does."""
    catalog = demo_catalog()
    entities = {
        name: spec.model_copy(update={"max_limit": max(spec.max_limit, rows)})
        for name, spec in catalog.entities.items()
    }
    wide: Catalog = catalog.model_copy(update={"entities": entities})
    return wide


def big_list(url: str, job: Job, case: Case, repeats: int, catalog: Catalog) -> list[H.Ratio]:
    engine = make_engine(url)
    raw = pg_connect(url, guarded=True)
    explain = pg_connect(url, guarded=True)
    plain = [(case.sql(job.tenant), None)]
    try:
        client = H.interleaved(
            [
                lambda: execute(job.bound, catalog, engine, job.tenant, timeout_ms=TIMEOUT_MS),
                lambda: pg_run_guarded(raw, job.tenant, job.statements, TIMEOUT_MS),
            ],
            repeats=repeats,
        )
        server = [H.Samples(), H.Samples()]
        server_time(explain, job.tenant, job.statements)
        for r in range(repeats):
            for index in H.rotation(r, 2):
                statements = job.statements if index == 0 else plain
                server[index].repeats.append([server_time(explain, job.tenant, statements)])
    finally:
        raw.close()
        explain.close()
        engine.dispose()
    path = f"a {job.rows:,}-row facts-first list with evidence, largest tenant"
    return [
        H.compare(
            f"{path}, client side", "execute", "psycopg + guards", *client, goal=H.at_most(1.5)
        ),
        H.compare(
            f"{path}, server side (EXPLAIN ANALYZE)",
            "qdsl's statements",
            "the plain select of the same rows",
            server[0],
            server[1],
            goal=H.at_most(1.5),
        ),
    ]


def run_pg(args: Any, facts: int, tenants: int) -> tuple[list[H.Ratio], list[str]]:
    catalog = demo_catalog()
    notes: list[str] = []
    out: list[H.Ratio] = []
    with throwaway_pg(args.admin_url) as url:
        t0 = time.perf_counter()
        load_pg(url, Shape(facts, tenants))
        notes.append(
            f"{facts:,} facts over {tenants} tenants loaded in {time.perf_counter() - t0:.0f} s"
        )
        engine = make_engine(url)
        try:
            ranks = sample_ranks(tenants)
            mixed = jobs(engine, catalog, [(c, tenant(r)) for c in pg_questions() for r in ranks])
            small_ranks = [r for r in ranks if r >= tenants // 2] or ranks[-1:]
            small = jobs(
                engine, catalog, [(c, tenant(r)) for c in pg_questions() for r in small_ranks]
            )
            case = theme_list("A股", args.list_rows)
            wide = wide_catalog(args.list_rows)
            listed = jobs(engine, wide, [(case, tenant(0))])[0]
        finally:
            engine.dispose()
        rounds, calls = args.rounds, args.calls
        qw, rw, _, _ = callers_compare(url, mixed, 16, rounds, calls)
        out.append(
            H.compare(
                "16 callers, one process: wall per call (1/throughput)",
                "execute",
                "psycopg + guards",
                qw,
                rw,
                goal=THROUGHPUT,
            )
        )
        per_s = [1 / H.stat(w.all, "p50") for w in (qw, rw)]
        notes.append(
            f"16 callers: qdsl {per_s[0]:.0f} calls/s, raw {per_s[1]:.0f} calls/s "
            f"({per_s[0] / per_s[1]:.2f}×; goal ≥ 0.7×)"
        )
        _, _, ql64, rl64 = callers_compare(
            url, mixed, 64, max(2, rounds // 2), calls, connections=16
        )
        out.append(
            H.compare(
                "64 callers on 16 connections: latency",
                "execute",
                "psycopg + guards",
                ql64,
                rl64,
                goal=H.at_most(1.5),
                which="p95",
            )
        )
        _, _, qs, rs = callers_compare(url, small, 16, rounds, calls)
        out.append(
            H.compare(
                f"small tenants (ranks {small_ranks[0]}+), 16 callers: latency",
                "execute",
                "psycopg + guards",
                qs,
                rs,
                goal=H.at_most(1.5),
            )
        )
        out += big_list(url, listed, case, args.repeats, wide)
        ratio, note = bench_mcp_workers.measure(
            url, args.mcp_callers, rounds, calls, tenant=tenant(min(30, tenants - 1))
        )
        out.append(ratio)
        notes.append(note)
    return out, notes


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_goals", __doc__)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--tenants", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=30, help="calls per caller per round")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--list-rows", type=int, default=LIST_ROWS)
    parser.add_argument("--mcp-callers", type=int, default=8)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    args, _ = parser.parse_known_args(argv)
    facts, tenants = args.facts, args.tenants
    if args.quick:
        facts, tenants = 2000, 20
        args.rounds, args.calls, args.repeats, args.list_rows, args.mcp_callers = 2, 2, 2, 50, 2
    ratios: list[H.Ratio] = []
    notes: list[str] = []
    why = "--skip-pg" if args.skip_pg else pg_reachable(args.admin_url)
    if why is None:
        with state_dir():
            found, notes = run_pg(args, facts, tenants)
        ratios += found
    else:
        notes.append(f"PostgreSQL rows skipped: {why}")
    ask, _ = bench_ask_startup.run(2 if args.quick else args.repeats, 1)
    ratios.append(ask)
    notes.append(
        f"{os.cpu_count()} cores; load average at the end "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min)"
    )
    for i, ratio in enumerate(ratios):
        H.record(f"goal_{i}", ratio)
    H.print_ratios("Issue 24's goals, one run", ratios, "; ".join(notes) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
