"""The benchmarks keep running: `python -m benchmarks --quick` end to end.

Quick mode runs every benchmark at tiny sizes and asserts nothing about time;
these tests prove that each still runs against the current code and that the
summary reports every row of issue 12's table. The PostgreSQL parts run in a
test of their own, which needs the server as the suite's PG fixtures do.
Also: the sqlglot guard the compiler is measured against really guards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import harness as H
from benchmarks.bench_analytics import analytics, check_plain
from benchmarks.bench_executor import jobs
from benchmarks.dataset import tenant as tenant_of
from benchmarks.shop_data import ShopShape, load_shop_pg, shop_catalog
from benchmarks.sqlguard import GuardError, Whitelist, guard
from benchmarks.workload import demo_cases, demo_questions
from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.db import make_engine

ROOT = Path(__file__).resolve().parents[1]
SQLITE_ROWS = (
    "JSON plan → bound SQL, warm",
    "text plan → SQL",
    "executor per cached plan, SQLite demo",
    "plan_and_answer on the demo",
    "qdsl --version",
    "qdsl --json refs list",
    'qdsl ask "Are there any A-share projects?"',
    "1 MB result stored + printed",
    "default audit log vs none",
)


def _run(*args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _summary(out: str) -> str:
    assert "## Summary" in out
    return out.split("## Summary", 1)[1]


def test_every_benchmark_runs_quick_without_postgres() -> None:
    out = _run("--skip-pg", "--no-pg")
    for name in (
        "bench_compile",
        "bench_executor",
        "bench_answer",
        "bench_startup",
        "bench_ask_startup",
    ):
        assert f"## {name}" in out
    summary = _summary(out)
    for row in SQLITE_ROWS:
        line = next(x for x in summary.splitlines() if row in x)
        assert "×" in line, line


def test_postgres_benchmarks_run_quick(pg_admin_url: str) -> None:
    out = _run(
        "--only",
        "executor,values,facts_load",
        "--admin-url",
        pg_admin_url,
        env={"QDSL_TEST_PG_URL": pg_admin_url},
    )
    summary = _summary(out)
    for row in ("p50 vs raw |", "p95 vs raw |", "p50 vs raw + guards", "p95 vs raw + guards"):
        line = next(x for x in summary.splitlines() if row in x)
        assert "facts-first" in line and "×" in line, line
    assert "skipped" not in out


def test_the_goal_table_runs_quick(pg_admin_url: str) -> None:
    out = _run(
        "--only", "goals", "--admin-url", pg_admin_url, env={"QDSL_TEST_PG_URL": pg_admin_url}
    )
    table = out.split("### Issue 24's goals, one run", 1)[1]
    for row in (
        "16 callers, one process",
        "64 callers on 16 connections",
        "small tenants",
        "client side",
        "server side (EXPLAIN ANALYZE)",
        "2 processes",
        "qdsl ask",
    ):
        line = next(x for x in table.splitlines() if row in x)
        assert "×" in line and ("met" in line), line
    assert "load average" in table and "skipped" not in out


def test_the_guard_accepts_the_workload_and_refuses_what_it_must() -> None:
    wl = Whitelist(demo_catalog())
    sqls = [c.sql("t1") for c in demo_cases()] + [q[1]("t1") for q in demo_questions()]
    for sql in sqls:
        assert "tenant_id = 't1'" in guard(sql, "t1", wl)
    exists = demo_cases()[0].sql("t1")
    refused = [
        (exists, "t2"),  # another tenant's literal
        (exists.replace("f.tenant_id = 't1' AND ", ""), "t1"),  # the facts EXISTS unbound
        ("SELECT p.id FROM projects AS p", "t1"),
        ("SELECT p.secret FROM projects AS p WHERE p.tenant_id = 't1'", "t1"),
        ("SELECT u.id FROM accounts AS u WHERE u.tenant_id = 't1'", "t1"),
        ("DELETE FROM projects WHERE tenant_id = 't1'", "t1"),
    ]
    for sql, tenant in refused:
        with pytest.raises(GuardError):
            guard(sql, tenant, wl)


def test_ratios_read_as_their_goals() -> None:
    a = H.Samples([[2.0, 2.0], [4.0]])
    b = H.Samples([[1.0, 1.0], [1.0]])
    slower = H.compare("p", "q", "alt", a, b, goal=H.at_most(1.5))
    assert (slower.value, slower.low, slower.high, slower.met) == (2.0, 2.0, 4.0, False)
    faster = H.compare("p", "q", "alt", b, a, goal=H.faster(1.5))
    assert faster.value == 2.0 and faster.met
    assert H.percentile([float(x) for x in range(1, 101)], 0.95) == 95.0


def test_interleaving_alternates_the_order() -> None:
    calls: list[str] = []
    H.interleaved([lambda: calls.append("a"), lambda: calls.append("b")], repeats=4, warmup=0)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]


def test_the_analytics_benchmark_runs_quick(pg_admin_url: str) -> None:
    out = _run(
        "--only",
        "analytics",
        "--lines",
        "2000",
        "--tenants",
        "8",
        "--admin-url",
        pg_admin_url,
    )
    client = out.split("### Analytics on PostgreSQL, client side", 1)[1].split("###", 1)[0]
    server = out.split("### Analytics on PostgreSQL, server side", 1)[1].split("## Summary")[0]
    each = out.split("### Analytics on PostgreSQL, client side, unprepared", 1)[1]
    each = each.split("###", 1)[0]
    tables = ((client, "psycopg + guards"), (each, "psycopg unprepared"), (server, "plain SQL"))
    for table, alternative in tables:
        lines = [x for x in table.splitlines() if x.startswith("| ") and "×" in x]
        assert len(lines) == 10, table
        assert all(alternative in x and "met" in x for x in lines), table
    for kind in ("aggregate", "by status", "by month", "many-to-one", "one-to-many"):
        assert sum(kind in x for x in _summary(out).splitlines()) == 2, kind
    assert "order_lines" in server and "skipped" not in out


def test_the_analytics_plain_sql_must_answer_as_qdsl_does(
    pg_database_factory: Callable[[], str],
) -> None:
    url = pg_database_factory()
    load_shop_pg(url, ShopShape(lines=400, tenants=3))
    engine = make_engine(url)
    try:
        items = analytics()
        found = jobs(
            engine, shop_catalog(), [(i.case, tenant_of(r)) for i in items for r in (0, 2)]
        )
        check_plain(url, engine, list(zip([i for i in items for _ in (0, 2)], found, strict=True)))
        card, *_ = items
        paypal = replace(
            card, plain=lambda t: [(s.replace("'card'", "'paypal'"), p) for s, p in card.plain(t)]
        )
        with pytest.raises(RuntimeError, match="the plain SQL answers otherwise"):
            check_plain(url, engine, [(paypal, found[0])])
    finally:
        engine.dispose()
