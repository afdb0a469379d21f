"""qdsl behind PgBouncer (transaction mode) against raw psycopg behind the same
PgBouncer, like for like.

Both run the same statements (the executor's, captured as the driver received
them: `benchmarks.rawdb`) inside the same guards, set per transaction: a READ
ONLY, REPEATABLE READ transaction, the reader role (row-level security
applies), the tenant setting and the statement timeout. Neither prepares
server-side, as PgBouncer 1.18 in transaction mode requires: qdsl through
`prepare_threshold=none` in its URL, raw psycopg with `prepare=False`.
C callers at once (threads), each with its own client connection, share the
pooler's P server connections.

Rounds alternate qdsl and raw, the order flipped every round; in a round every
caller makes N calls, each a demo plan for one of the demo's small tenants in
turn. Reported: the round's wall time per call (the inverse of throughput;
its goal is issue 24's "≥ 0.7× the throughput of raw psycopg"), and each call's
latency at p50 and p95 (goal ≤ 1.5×). PgBouncer is the Debian package's
binary, started on a free port with its own configuration
(`benchmarks.local_servers`); without it, or without a server, this says so
and stops.

    python -m benchmarks.bench_pooler [--quick] [--callers 16] [--pool-size 4]
        [--rounds 6] [--calls 40] [--admin-url URL] [--skip-pg]
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import sqlalchemy as sa

from benchmarks import harness as H
from benchmarks import local_servers
from benchmarks.bench_executor import ADMIN_URL, TIMEOUT_MS, Job, jobs, state_dir
from benchmarks.dataset import pg_reachable, throwaway_pg
from benchmarks.rawdb import pg_connect, pg_run_guarded
from benchmarks.workload import demo_cases
from qdsl.dsl.catalog import demo_catalog
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine
from qdsl.facts.demo.setup import ensure_demo

TENANTS = ("t1", "t2", "t3")
Call = Callable[[int], object]


def _round(calls: list[Call], per_caller: int) -> tuple[float, list[float]]:
    """All callers at once, `per_caller` calls each: (wall seconds per call, latencies)."""
    start = threading.Barrier(len(calls) + 1)
    latencies: list[list[float]] = [[] for _ in calls]
    faults: list[BaseException] = []

    def work(i: int) -> None:
        call = calls[i]
        start.wait()
        try:
            for n in range(per_caller):
                t0 = time.perf_counter_ns()
                call(n)
                latencies[i].append((time.perf_counter_ns() - t0) / 1e9)
        except BaseException as exc:
            faults.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if faults:
        raise faults[0]
    every = [x for per in latencies for x in per]
    return wall / len(every), every


def _qdsl_calls(engine: sa.Engine, found: list[Job], callers: int) -> list[Call]:
    catalog = demo_catalog()

    def caller(i: int) -> Call:
        def call(n: int) -> object:
            job = found[(i + n) % len(found)]
            return execute(job.bound, catalog, engine, job.tenant, timeout_ms=TIMEOUT_MS)

        return call

    return [caller(i) for i in range(callers)]


def _raw_calls(
    conns: list[psycopg.Connection[Any]], found: list[Job], *, prepare: bool = False
) -> list[Call]:
    """Raw psycopg callers; not prepared server-side by default (behind the pooler)."""

    def caller(i: int) -> Call:
        conn = conns[i]

        def call(n: int) -> object:
            job = found[(i + n) % len(found)]
            return pg_run_guarded(conn, job.tenant, job.statements, TIMEOUT_MS, prepare=prepare)

        return call

    return [caller(i) for i in range(len(conns))]


def compare(
    url: str, raw_url: str, callers: int, rounds: int, per_caller: int
) -> tuple[list[H.Ratio], str]:
    engine = make_engine(url, pool_size=callers, max_overflow=0)
    conns: list[psycopg.Connection[Any]] = []
    try:
        found = jobs(engine, demo_catalog(), [(c, t) for c in demo_cases() for t in TENANTS])
        conns = [pg_connect(raw_url, guarded=True) for _ in range(callers)]
        variants = [_qdsl_calls(engine, found, callers), _raw_calls(conns, found)]
        for calls in variants:  # warm: every connection opened, every statement cached
            _round(calls, max(2, len(found) // callers + 1))
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
    qdsl_name, raw_name = "execute via PgBouncer", "psycopg + guards via PgBouncer"
    path = f"{callers} callers, {len(found)} plans × tenants"
    ratios = [
        H.compare(
            f"wall per call (1/throughput), {path}", qdsl_name, raw_name, walls[0], walls[1],
            goal=H.at_most(round(1 / 0.7, 2)),
        ),
        H.compare(f"latency, {path}", qdsl_name, raw_name, each[0], each[1], goal=H.at_most(1.5)),
        H.compare(
            f"latency, {path}", qdsl_name, raw_name, each[0], each[1], goal=H.at_most(1.5),
            which="p95",
        ),
    ]
    per_s = [1 / H.stat(w.all, "p50") for w in walls]
    note = (
        f"throughput (median round): qdsl {per_s[0]:.0f} calls/s, raw {per_s[1]:.0f} calls/s "
        f"({per_s[0] / per_s[1]:.2f}× raw); {rounds} rounds × {callers} callers × "
        f"{per_caller} calls each; the goal of the first row is the throughput goal ≥ 0.7×."
    )
    return ratios, note


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_pooler", __doc__)
    parser.add_argument("--callers", type=int, default=16)
    parser.add_argument("--pool-size", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=40, help="calls per caller per round")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    args, _ = parser.parse_known_args(argv)
    callers, rounds, calls = args.callers, args.rounds, args.calls
    if args.quick:
        callers, rounds, calls = 4, 2, 3
    if args.skip_pg:
        print("\nskipped: --skip-pg (PgBouncer needs a PostgreSQL server)")
        return 0
    binary = local_servers.pgbouncer_binary()
    why = pg_reachable(args.admin_url) or (None if binary else "pgbouncer is not installed")
    if why is not None or binary is None:
        print(f"\nskipped: {why}")
        return 0
    server_port = sa.make_url(args.admin_url).port or 5432
    with state_dir(), throwaway_pg(args.admin_url) as url:
        ensure_demo(url)
        bouncer = local_servers.start_pgbouncer(binary, server_port, pool_size=args.pool_size)
        try:
            database = sa.make_url(url).database or ""
            ratios, note = compare(
                bouncer.url(database, prepare_threshold="none"),
                bouncer.url(database),
                callers,
                rounds,
                calls,
            )
        finally:
            bouncer.stop()
    for key, ratio in zip(("pooler_throughput", "pooler_p50", "pooler_p95"), ratios, strict=True):
        H.record(key, ratio)
    H.print_ratios(
        f"qdsl vs raw psycopg, both behind PgBouncer {args.pool_size} server connections "
        "(transaction mode), the demo's small tenants",
        ratios,
        note,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
