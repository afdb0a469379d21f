"""The analytics kinds on PostgreSQL, 1M order lines, against raw psycopg + guards.

    python -m benchmarks.bench_analytics [--quick] [--lines 1000000] [--tenants 200]
        [--repeats 15] [--explain] [--admin-url URL] [--skip-pg]

A throwaway database (`dataset.throwaway_pg`) holds the shop deployment
(tests/deployments/shop/: customers, products, orders, order lines, payments)
scaled to `--lines` order lines over Zipf-skewed tenants (`shop_data`: ~0.4
orders, ~0.36 payments per line; 1M lines take a minute or two to load on a
loaded two-core machine; the load's time is printed), secured as `qdsl db
secure` secures it. The plans, each for tenants of every size
(`dataset.sample_ranks`):

* an aggregate: `aggregate payment where method = "card" measure sum(amount)`;
* two breakdowns: orders by status (`group by status`) and by month
  (`group by ordered_at month`);
* two relation filters: `list order where customer.city = "Berlin"`
  (many-to-one) and `list order where payments.refunded = true` (some payment
  of the order: an existence across a one-to-many relation).

What is measured is the executor entry the other PostgreSQL benchmarks use
(`execute` of a plan bound once: compile-cache hit, the executor's session
guards, the statements, the rows and the kind's result built), not
`plan_and_answer` (the question reader and the verifier are timed by
`bench_answer` and `bench_question` on their own). Two tables:

* **client side**: `execute` against raw psycopg running the very statements
  the executor sent (captured: `rawdb.captured`) inside the same guards, set
  the same way per transaction (`rawdb.pg_run_guarded`: READ ONLY, REPEATABLE
  READ, the reader role so row-level security applies, the tenant setting, the
  statement timeout). Per repeat every tenant's plan runs through both, the
  order flipped per tenant and per repeat (`harness.interleaved_over`). Goal
  (issue 24): ≤ 1.3×. Twice: both sides preparing server-side (qdsl from the
  fifth run, psycopg's default; raw `prepare=True`), as deployed, where
  PostgreSQL's choice of a generic or a custom plan for a prepared statement
  follows each connection's history of tenants, so one statement may run with
  different plans on the two sides; then unprepared on both sides (qdsl's
  `prepare_threshold=none`, raw `prepare=False`), every call planned for its
  own values: the same plans, so the ratio is qdsl's own cost.
* **server side**: PostgreSQL's own execution time (`EXPLAIN ANALYZE`, in the
  same guards: `bench_goals.server_time`) of qdsl's statements against the
  plain SQL a person would write for the same answer without its evidence
  (the measure alone; the counts per group; the page of rows and how many
  match), interleaved the same way. Goal: ≤ 1.5×, as `bench_goals` holds the
  list's server side. `--explain` prints both plans for the largest tenant.

Each row prints its ratio (the median over all calls of every tenant), the
spread over repeats and the verdict; nothing fails on time. The plain SQL is
checked to give the answer qdsl gives before anything is timed.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
import sqlalchemy as sa

from benchmarks import harness as H
from benchmarks.bench_executor import ADMIN_URL, TIMEOUT_MS, Job, jobs
from benchmarks.bench_goals import server_time
from benchmarks.dataset import pg_reachable, sample_ranks, tenant, throwaway_pg
from benchmarks.rawdb import GUARDS, Statement, pg_connect, pg_run_guarded
from benchmarks.shop_data import ShopShape, load_shop_pg, shop_catalog
from benchmarks.workload import Case
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine

LIST_COLUMNS = "o.id, o.number, o.status, o.ordered_at"
PAGE = 20
BERLIN_MONTH = "date_trunc('month', ordered_at AT TIME ZONE 'UTC' AT TIME ZONE 'Europe/Berlin')"


@dataclass(frozen=True)
class Analytic:
    """A plan, the plain SQL of its answer for a tenant, and what both must agree on."""

    case: Case
    plain: Callable[[str], list[Statement]]
    agrees: Callable[[ExecutionResult, list[list[tuple[Any, ...]]]], bool]


def _sum_agrees(result: ExecutionResult, plain: list[list[tuple[Any, ...]]]) -> bool:
    return float(result.data["value"] or 0) == float(plain[0][0][0] or 0)


def _groups_agree(result: ExecutionResult, plain: list[list[tuple[Any, ...]]]) -> bool:
    shown = sorted(int(g["value"]) for g in result.data["groups"])
    counts = sorted(int(row[1]) for row in plain[0])
    return shown == counts[len(counts) - len(shown) :] and result.data["total"] == sum(counts)


def _page_agrees(result: ExecutionResult, plain: list[list[tuple[Any, ...]]]) -> bool:
    ids = [str(row[0]) for row in plain[0]]
    return [r.entity_id for r in result.rows] == ids and result.count == plain[1][0][0]


def _list(matches: str) -> Callable[[str], list[Statement]]:
    def plain(t: str) -> list[Statement]:
        where = f"o.tenant_id = '{t}' AND {matches.format(t=t)}"
        return [
            (
                f"SELECT {LIST_COLUMNS} FROM orders AS o WHERE {where} "
                f"ORDER BY o.ordered_at DESC, o.id LIMIT {PAGE}",
                None,
            ),
            (f"SELECT count(*) FROM orders AS o WHERE {where}", None),
        ]

    return plain


def analytics() -> list[Analytic]:
    def case(label: str, text: str) -> Case:
        return Case(label, text, lambda _t: "")

    return [
        Analytic(
            case(
                "aggregate: sum of card payments",
                'aggregate payment where method = "card" measure sum(amount)',
            ),
            lambda t: [
                (
                    f"SELECT sum(amount) FROM payments WHERE tenant_id = '{t}' AND method = 'card'",
                    None,
                )
            ],
            _sum_agrees,
        ),
        Analytic(
            case(
                "breakdown: web orders by status",
                'breakdown order where channel = "web" group by status',
            ),
            lambda t: [
                (
                    f"SELECT status, count(*) FROM orders WHERE tenant_id = '{t}' "
                    "AND channel = 'web' GROUP BY status ORDER BY count(*) DESC, status",
                    None,
                )
            ],
            _groups_agree,
        ),
        Analytic(
            case(
                "breakdown: delivered orders by month",
                'breakdown order where status = "delivered" group by ordered_at month',
            ),
            lambda t: [
                (
                    f"SELECT {BERLIN_MONTH}, count(*) FROM orders WHERE tenant_id = '{t}' "
                    "AND status = 'delivered' GROUP BY 1 ORDER BY 2 DESC, 1",
                    None,
                )
            ],
            _groups_agree,
        ),
        Analytic(
            case(
                "relation, many-to-one: orders of Berlin customers",
                'list order where customer.city = "Berlin"',
            ),
            _list(
                "EXISTS (SELECT 1 FROM customers AS c WHERE c.tenant_id = '{t}' "
                "AND c.id = o.customer_id AND c.city = 'Berlin')"
            ),
            _page_agrees,
        ),
        Analytic(
            case(
                "relation, one-to-many: orders with a refunded payment",
                "list order where payments.refunded = true",
            ),
            _list(
                "EXISTS (SELECT 1 FROM payments AS p WHERE p.tenant_id = '{t}' "
                "AND p.order_id = o.id AND p.refunded)"
            ),
            _page_agrees,
        ),
    ]


def _plain_rows(
    conn: psycopg.Connection[Any], t: str, statements: list[Statement]
) -> list[list[tuple[Any, ...]]]:
    conn.execute(GUARDS, (READER_ROLE, t, str(TIMEOUT_MS)))
    out = [conn.execute(sql, params).fetchall() for sql, params in statements]
    conn.commit()
    return out


def check_plain(url: str, engine: Any, found: list[tuple[Analytic, Job]]) -> None:
    """Each plain statement answers what qdsl answers (else its time means nothing)."""
    catalog = shop_catalog()
    conn = pg_connect(url, guarded=True)
    try:
        for item, job in found:
            result = execute(job.bound, catalog, engine, job.tenant, timeout_ms=TIMEOUT_MS)
            plain = _plain_rows(conn, job.tenant, item.plain(job.tenant))
            if not item.agrees(result, plain):
                raise RuntimeError(f"{job.label}, {job.tenant}: the plain SQL answers otherwise")
    finally:
        conn.close()


def client_side(
    url: str, engine: Any, group: list[Job], repeats: int, *, prepare: bool
) -> list[H.Samples]:
    """`execute` and the raw replay of its statements per tenant of `group`; `engine`
    prepares as the raw side does (psycopg's default, or never)."""
    catalog = shop_catalog()
    raw = pg_connect(url, guarded=True)
    try:
        return H.interleaved_over(
            group,
            [
                lambda j: execute(j.bound, catalog, engine, j.tenant, timeout_ms=TIMEOUT_MS),
                lambda j: pg_run_guarded(raw, j.tenant, j.statements, TIMEOUT_MS, prepare=prepare),
            ],
            repeats=repeats,
        )
    finally:
        raw.close()


def unprepared(url: str) -> str:
    """`url` with qdsl's own switch for psycopg's server-side prepares turned off."""
    return (
        sa.make_url(url)
        .update_query_dict({"prepare_threshold": "none"})
        .render_as_string(hide_password=False)
    )


def server_side(url: str, item: Analytic, group: list[Job], repeats: int) -> list[H.Samples]:
    """Server times of qdsl's statements and of the plain ones, per tenant of `group`."""
    conn = pg_connect(url, guarded=True)
    plains = [item.plain(j.tenant) for j in group]
    try:
        return H.interleaved_over(
            list(range(len(group))),
            [
                lambda i: server_time(conn, group[i].tenant, group[i].statements),
                lambda i: server_time(conn, group[i].tenant, plains[i]),
            ],
            repeats=repeats,
        )
    finally:
        conn.close()


def largest(samples: H.Samples) -> H.Samples:
    """The calls of the first tenant only (rank 0, the largest)."""
    return H.Samples([rep[:1] for rep in samples.repeats])


def rows(label: str, names: tuple[str, str], pair: list[H.Samples], goal: H.Goal) -> list[H.Ratio]:
    a, b = pair
    return [
        H.compare(f"{label}, every tenant", *names, a, b, goal=goal),
        H.compare(f"{label}, largest tenant", *names, largest(a), largest(b), goal=goal),
    ]


def explain(url: str, item: Analytic, job: Job) -> None:
    conn = pg_connect(url, guarded=True)
    try:
        conn.execute(GUARDS, (READER_ROLE, job.tenant, str(TIMEOUT_MS)))
        for who, statements in (("qdsl", job.statements), ("plain", item.plain(job.tenant))):
            for k, (sql, params) in enumerate(statements):
                rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
                print(f"\n#### {job.label}, {job.tenant}: {who} statement {k + 1}\n")
                print("\n".join(str(r[0]) for r in rows))
        conn.commit()
    finally:
        conn.close()


def run_pg(args: Any) -> tuple[list[H.Ratio], list[H.Ratio], list[H.Ratio], list[str]]:
    catalog = shop_catalog()
    items = analytics()
    client: list[H.Ratio] = []
    each: list[H.Ratio] = []
    server: list[H.Ratio] = []
    notes: list[str] = []
    with throwaway_pg(args.admin_url) as url:
        t0 = time.perf_counter()
        counts = load_shop_pg(url, ShopShape(args.lines, args.tenants))
        loaded = ", ".join(f"{n:,} {t}" for t, n in counts.items())
        notes.append(
            f"{loaded} over {args.tenants} tenants loaded in {time.perf_counter() - t0:.0f} s"
        )
        ranks = sample_ranks(args.tenants)
        engine = make_engine(url)
        planned = make_engine(unprepared(url))
        try:
            groups = [jobs(engine, catalog, [(i.case, tenant(r)) for r in ranks]) for i in items]
            check_plain(
                url, engine, [(i, j) for i, g in zip(items, groups, strict=True) for j in g]
            )
            for item, group in zip(items, groups, strict=True):
                label = item.case.label
                pair = client_side(url, engine, group, args.repeats, prepare=True)
                client += rows(label, ("execute", "psycopg + guards"), pair, H.at_most(1.3))
                pair = client_side(url, planned, group, args.repeats, prepare=False)
                each += rows(label, ("execute", "psycopg unprepared"), pair, H.at_most(1.3))
                pair = server_side(url, item, group, args.repeats)
                server += rows(label, ("qdsl's statements", "plain SQL"), pair, H.at_most(1.5))
                if args.explain:
                    explain(url, item, group[0])
        finally:
            engine.dispose()
            planned.dispose()
    notes.append(f"tenants of ranks {ranks}, {args.repeats} repeats")
    return client, each, server, notes


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_analytics", __doc__)
    parser.add_argument(
        "--lines", type=int, default=None, help="order lines (default 1M; quick 50k)"
    )
    parser.add_argument("--tenants", type=int, default=None, help="default 200; quick 20")
    parser.add_argument("--repeats", type=int, default=None, help="default 15; quick 2")
    parser.add_argument("--explain", action="store_true", help="print the largest tenant's plans")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    args, _ = parser.parse_known_args(argv)
    quick = (50_000, 20, 2) if args.quick else (1_000_000, 200, 15)
    args.lines = args.lines or quick[0]
    args.tenants = args.tenants or quick[1]
    args.repeats = args.repeats or quick[2]
    why = "--skip-pg" if args.skip_pg else pg_reachable(args.admin_url)
    if why is not None:
        print(f"\nbench_analytics skipped: no PostgreSQL ({why})")
        return 0
    client, each, server, notes = run_pg(args)
    notes.append(
        f"{os.cpu_count()} cores; load average at the end "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min)"
    )
    for i, ratio in enumerate(client):
        H.record(f"analytics_{i}", ratio)
    H.print_ratios(
        "Analytics on PostgreSQL, client side: execute vs raw psycopg + guards",
        client,
        "Both prepare server-side (qdsl from the fifth run, psycopg's default; raw "
        "prepare=True); PostgreSQL then picks a custom or a generic plan per connection "
        "from its history, so the two sides may run one statement with different plans.",
    )
    H.print_ratios(
        "Analytics on PostgreSQL, client side, unprepared: execute vs raw psycopg + guards",
        each,
        "qdsl with prepare_threshold=none in its URL, raw prepare=False: every call is "
        "planned for its own values on both sides (the same plans).",
    )
    H.print_ratios(
        "Analytics on PostgreSQL, server side (EXPLAIN ANALYZE): qdsl's statements vs plain SQL",
        server,
        "; ".join(notes) + ".",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
