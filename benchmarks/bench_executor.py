"""Executor cost: compile time per plan, and latency on PostgreSQL at scale.

1. Compile: `prepare()` + SQL rendering per plan (one per template of the demo
   catalog), first time (statement cache empty) and cached. No database.
2. PostgreSQL, in a throwaway database built by INSERT ... SELECT
   generate_series (dropped at the end): 200 tenants, 50,000 projects,
   1,000,000 semantic_facts rows and their text_grams. The same questions run
   through (a) the executor, end to end (read-only role, RLS, tenant setting,
   timeout, baseline guard, evidence reads) and (b) the path a user would
   otherwise take: SQL written by an LLM, guarded by sqlglot (parse, whitelist
   walk, tenant literal check, regenerate), then run in the same session setup.
   p50 / p95 per question and the ratio (b) / (a).

    python -m benchmarks.bench_executor [--facts N] [--tenants N] [--iterations N] [--skip-pg]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.ir import Filter, ObjectRef, Operator, Plan, QueryType, RetrievalPolicy, Scope, Sort
from qdsl.dsl.ir import SortDirection as Dir
from qdsl.executor.compile import prepare, render
from qdsl.executor.run import _pg_setup, execute, read_only
from qdsl.executor.statements import STATEMENTS
from qdsl.executor.tables import FACT_COLUMNS, entity_columns
from qdsl.executor.templates import registry
from qdsl.facts.db import make_engine, upgrade

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
THEMES = ("A股", "A-share", "港股", "美股", "HK equities", "沪深A股", "US equities")
SUMMARIES = ("整理港股与海外市场的研究笔记", "risk limit recalibration", "交易监控调优")
PREDICATES = ("market_theme", "sector", "region", "risk_level", "owner_team")
TITLES = (
    "港股做市",
    "A股量化",
    "美股研究",
    "债券风控",
    "Ingress gate",
    "Verifier audit",
    "沪深A股打新",
    "行业轮动",
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- 1. compile ------------------------------------------------------------------------


def _sample_plans(catalog: Catalog) -> list[Plan]:
    plans = []
    for entity, qt in sorted(registry(catalog)):
        spec = catalog.entity(entity)
        refs: tuple[ObjectRef, ...] = ()
        filters: tuple[Filter, ...] = ()
        if qt in (QueryType.STATUS, QueryType.DIAGNOSE, QueryType.COMPARE):
            refs = (ObjectRef(entity_type=entity, id="64"), ObjectRef(entity_type=entity, id="65"))
        fact = next((n for n, f in spec.fields.items() if f.is_fact), None)
        if fact and qt not in (QueryType.STATUS, QueryType.COMPARE):
            filters = (Filter(field=fact, operator=Operator.EQUALS_OR_ALIAS, value="x"),)
        plans.append(
            Plan(
                query_type=qt,
                entity_type=entity,
                filters=filters,
                scope=Scope(referenced_objects=refs),
                retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
            )
        )
    return plans


def _bound(plan: Plan, catalog: Catalog, tenant: str) -> BoundPlan:
    from qdsl.dsl.normalize import PlanContext, normalize

    bound = normalize(plan, catalog, PlanContext(tenant_id=tenant)).bound
    assert bound is not None
    return bound


def bench_compile(reps: int = 200) -> list[tuple[str, float, float]]:
    catalog = demo_catalog()
    rows = []
    for raw in _sample_plans(catalog):
        # what the pipeline hands the executor: the plan bound by the normalizer
        plan = _bound(raw, catalog, "t1")
        firsts, cached = [], []
        for _ in range(max(5, reps // 20)):
            STATEMENTS.clear()
            from qdsl.executor import compile as compile_mod

            compile_mod._SQL_TEXT.clear()
            t0 = time.perf_counter()
            prep = prepare(plan, catalog, "postgresql", "t1")
            for _role, stmt in prep.statements.named():
                render(stmt, "postgresql")
            firsts.append((time.perf_counter() - t0) * 1e6)
        for _ in range(reps):
            t0 = time.perf_counter()
            prep = prepare(plan, catalog, "postgresql", "t1")
            for _role, stmt in prep.statements.named():
                render(stmt, "postgresql")
            cached.append((time.perf_counter() - t0) * 1e6)
        rows.append(
            (
                f"{raw.entity_type}.{raw.query_type.value}",
                statistics.median(firsts),
                statistics.median(cached),
            )
        )
    return rows


# -- 2. PostgreSQL at scale --------------------------------------------------------------


@contextmanager
def throwaway_database(admin_url: str) -> Iterator[str]:
    name = f"qdsl_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))  # generated name, not input
    try:
        yield sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _arr(values: tuple[str, ...]) -> str:
    # Fixed benchmark vocabulary, written into the load script (not user input).
    return "ARRAY[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


BIG_TENANT = "big"


def build(url: str, tenants: int, facts: int, big_projects: int) -> dict[str, float]:
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    upgrade(url)
    # The migrations create qdsl's own tables; the demo's schema (which this
    # benchmark fills) lives with the demo, tenant-secured like it.
    from qdsl.facts.demo.setup import _create_schema

    _create_schema(make_engine(url))
    timings["migrate"] = time.perf_counter() - t0
    per_tenant_projects = 250
    facts_per_project = max(1, facts // (tenants * per_tenant_projects))
    engine = make_engine(url)
    steps = {
        "projects": f"""
            INSERT INTO projects (tenant_id, id, title, summary, status, budget, created_at)
            SELECT 'b' || lpad(t::text, 3, '0'), p::text,
                   ({_arr(TITLES)})[1 + (p * 7 + t) % {len(TITLES)}] || ' ' || p,
                   CASE WHEN p % 10 = 0 THEN ({_arr(SUMMARIES)})[1 + p % 3] END,
                   (ARRAY['active', 'paused', 'closed'])[1 + (p + t) % 3],
                   p * 1000, timestamptz '2026-01-01' + make_interval(hours => p)
            FROM generate_series(0, {tenants - 1}) t,
                 generate_series(1, {per_tenant_projects}) p""",
        "semantic_facts": f"""
            INSERT INTO semantic_facts (tenant_id, entity_type, entity_id, predicate, value_text,
                value_norm, source_type, source_ref, confidence, observed_at, valid_until)
            SELECT 'b' || lpad(t::text, 3, '0'), 'project', p::text, pred, val, lower(val), 'crm',
                   'crm:project/' || p, 0.9,
                   timestamptz '2026-09-01' - make_interval(days => (k * 13 + p) % 400),
                   CASE WHEN (k + p) % 7 = 0 THEN timestamptz '2026-06-30' END
            FROM generate_series(0, {tenants - 1}) t,
                 generate_series(1, {per_tenant_projects}) p,
                 generate_series(0, {facts_per_project - 1}) k,
                 LATERAL (SELECT
                   ({_arr(PREDICATES)})[1 + k % 5] AS pred,
                   CASE WHEN k % 5 = 0
                        THEN ({_arr(THEMES)})[1 + (p * 3 + k + t) % {len(THEMES)}]
                        ELSE 'v' || ((p * (k + 1) + t) % 50) END AS val) v""",
        "big_tenant": f"""
            INSERT INTO projects (tenant_id, id, title, summary, status, budget, created_at)
            SELECT '{BIG_TENANT}', p::text,
                   ({_arr(TITLES)})[1 + (p * 7) % {len(TITLES)}] || ' ' || p,
                   CASE WHEN p % 10 = 0 THEN ({_arr(SUMMARIES)})[1 + p % 3] END,
                   (ARRAY['active', 'paused', 'closed'])[1 + p % 3],
                   p * 10, timestamptz '2026-01-01' + make_interval(mins => p)
            FROM generate_series(1, {big_projects}) p;
            INSERT INTO semantic_facts (tenant_id, entity_type, entity_id, predicate, value_text,
                value_norm, source_type, source_ref, confidence, observed_at)
            SELECT '{BIG_TENANT}', 'project', p::text, 'market_theme', v, lower(v), 'crm',
                   'crm:project/' || p, 0.9, timestamptz '2026-09-01'
            FROM generate_series(1, {big_projects}) p,
                 LATERAL (SELECT ({_arr(THEMES)})[1 + p % {len(THEMES)}] AS v) x""",
        "text_grams": """
            INSERT INTO text_grams (tenant_id, entity_type, gram, entity_id)
            SELECT DISTINCT s.tenant_id, 'project', s.g, s.id FROM (
              SELECT p.tenant_id, p.id, substr(lower(c.txt), i, n.n) AS g
              FROM projects p
              CROSS JOIN LATERAL (VALUES (p.title), (p.summary)) c(txt)
              CROSS JOIN LATERAL generate_series(1, coalesce(length(c.txt), 0)) i
              CROSS JOIN (VALUES (1), (2)) n(n)
              WHERE c.txt IS NOT NULL AND i + n.n - 1 <= length(c.txt)
            ) s WHERE btrim(s.g) <> ''""",
    }
    with engine.begin() as conn:
        for name, sql in steps.items():
            t0 = time.perf_counter()
            conn.execute(sa.text(sql))
            timings[name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE"))
        counts = {
            t: conn.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar_one()
            for t in ("projects", "semantic_facts", "text_grams")
        }
    timings["analyze"] = time.perf_counter() - t0
    engine.dispose()
    timings.update({f"rows.{k}": float(v) for k, v in counts.items()})
    return timings


# -- the questions: a plan and the SQL an LLM would write for it ----------------------------


def _in_list(values: list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _theme_norms(value: str) -> list[str]:
    field = demo_catalog().entity("project").fields["market_theme"]
    from qdsl.dsl.bound import alias_set

    return list(alias_set(field, value))


def questions() -> list[tuple[str, str, Callable[[str], Plan], Callable[[str], str]]]:
    def theme(
        value: str,
        *,
        qt: QueryType = QueryType.EXISTENCE,
        fallback: bool = False,
        extra: tuple[Filter, ...] = (),
        sort: tuple[Sort, ...] = (),
    ) -> Callable[[str], Plan]:
        def make(_tenant: str) -> Plan:
            return Plan(
                query_type=qt,
                entity_type="project",
                filters=(
                    Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value=value),
                    *extra,
                ),
                sort=sort,
                limit=20,
                retrieval_policy=RetrievalPolicy(
                    facts_first=not fallback, allow_fallback_text=fallback
                ),
            )

        return make

    def facts_sql(
        value: str, *, select: str = "p.id, p.title", tail: str = "", extra: str = ""
    ) -> Callable[[str], str]:
        norms = _in_list(_theme_norms(value))
        return lambda t: (
            f"SELECT {select} FROM projects AS p WHERE p.tenant_id = '{t}'{extra} AND EXISTS ("
            f"SELECT 1 FROM semantic_facts AS f WHERE f.tenant_id = '{t}' "
            "AND f.entity_type = 'project' AND f.entity_id = p.id "
            f"AND f.predicate = 'market_theme' AND f.value_norm IN ({norms})){tail}"
        )

    def text_sql(value: str) -> Callable[[str], str]:
        terms = _theme_norms(value)
        ors = " OR ".join(f"p.title ILIKE '%{x}%' OR p.summary ILIKE '%{x}%'" for x in terms)
        return lambda t: (
            "SELECT p.id, p.title FROM projects AS p "
            f"WHERE p.tenant_id = '{t}' AND ({ors}) ORDER BY p.created_at DESC LIMIT 21"
        )

    active = (Filter(field="status", operator=Operator.EQUALS, value="active"),)
    return [
        (
            "existence A股 (facts)",
            "facts",
            theme("A股"),
            facts_sql("A股", tail=" ORDER BY p.created_at DESC LIMIT 21"),
        ),
        (
            "count 港股 active (facts)",
            "facts",
            theme("港股", qt=QueryType.COUNT, extra=active),
            facts_sql("港股", select="count(*)", extra=" AND p.status = 'active'"),
        ),
        (
            "list 美股 by created (facts)",
            "facts",
            theme("美股", qt=QueryType.LIST, sort=(Sort(field="created_at", direction=Dir.DESC),)),
            facts_sql("美股", tail=" ORDER BY p.created_at DESC LIMIT 21"),
        ),
        (
            # an empty answer: no tenant has this theme (the guard still reads the baseline)
            "existence 科创板 (none)",
            "facts",
            theme("科创板"),
            facts_sql("科创板", tail=" ORDER BY p.created_at DESC LIMIT 21"),
        ),
        ("text 港股 + 6 aliases", "fallback", theme("港股", fallback=True), text_sql("港股")),
        ("text 股 (1 char)", "fallback", theme("股", fallback=True), text_sql("股")),
        ("text 量化 (2 chars)", "fallback", theme("量化", fallback=True), text_sql("量化")),
        ("text 债券风 (3 chars)", "fallback", theme("债券风", fallback=True), text_sql("债券风")),
    ]


# -- the sqlglot guard of the LLM-SQL path ----------------------------------------------------

_FUNCS = (exp.Count, exp.Lower, exp.Exists, exp.Star)
_FORBIDDEN = (exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Create, exp.Command, exp.Alter)


class GuardError(Exception):
    pass


def guard(sql: str, tenant: str, catalog: Catalog) -> str:
    """Parse, walk against the whitelist, require the tenant on every table, regenerate."""
    tables = {e.table for e in catalog.entities.values()} | {catalog.facts.table}
    columns = {c for e in catalog.entities.values() for c in entity_columns(e)} | set(FACT_COLUMNS)
    tree = sqlglot.parse_one(sql, read="postgres")
    if not isinstance(tree, exp.Select):
        raise GuardError("only SELECT")
    aliases: dict[str, str] = {}
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN):
            raise GuardError(type(node).__name__)
        if isinstance(node, exp.Table):
            if node.name not in tables:
                raise GuardError(f"table {node.name}")
            aliases[node.alias_or_name] = node.name
        elif isinstance(node, exp.Column) and node.name not in columns:
            raise GuardError(f"column {node.name}")
        elif (
            isinstance(node, exp.Func)
            and not isinstance(node, exp.Binary | exp.Connector | exp.Predicate | exp.Unary)
            and not isinstance(node, _FUNCS)
        ):
            raise GuardError(f"function {node.sql()}")
    bound = {
        eq.left.table
        for eq in tree.find_all(exp.EQ)
        if isinstance(eq.left, exp.Column)
        and eq.left.name == "tenant_id"
        and isinstance(eq.right, exp.Literal)
        and eq.right.this == tenant
    }
    if set(aliases) - bound:
        raise GuardError("tenant predicate missing")
    return tree.sql(dialect="postgres")


# -- timing -----------------------------------------------------------------------------------


Row = tuple[str, str, float, float, float, float, float, float]


def bench_pg(url: str, iterations: int, tenants: int) -> list[Row]:
    """Per question and tenant size: executor and LLM-SQL p50/p95 (ms), statements
    per executor run, and the guard's own cost (ms, no database)."""
    catalog = demo_catalog()
    engine = make_engine(url, pool_size=2)
    statements = [0]

    def count(*_args: Any) -> None:
        statements[0] += 1

    sa.event.listen(engine, "before_cursor_execute", count)
    rng = random.Random(7)
    out: list[Row] = []
    for label, _kind, make_plan, make_sql in questions():
        for size in ("small", "big"):
            ex_ms: list[float] = []
            llm_ms: list[float] = []
            guard_ms: list[float] = []
            ex_statements = 0
            for i in range(iterations + 5):
                tenant = f"b{rng.randrange(tenants):03d}" if size == "small" else BIG_TENANT
                before = statements[0]
                plan = _bound(make_plan(tenant), catalog, tenant)
                t0 = time.perf_counter()
                execute(plan, catalog, engine, tenant, timeout_ms=10_000)
                t1 = time.perf_counter()
                ran = statements[0] - before
                with engine.connect() as conn:
                    read_only(conn)  # the same session guards as the executor's
                    conn.begin()
                    _pg_setup(conn, tenant, 10_000)
                    g0 = time.perf_counter()
                    safe = guard(make_sql(tenant), tenant, catalog)
                    g1 = time.perf_counter()
                    conn.execute(sa.text(safe)).all()
                    conn.rollback()
                t2 = time.perf_counter()
                if i >= 5:  # warm-up excluded
                    ex_ms.append((t1 - t0) * 1000)
                    llm_ms.append((t2 - t1) * 1000)
                    guard_ms.append((g1 - g0) * 1000)
                    ex_statements += ran
            out.append(
                (
                    label,
                    size,
                    pct(ex_ms, 0.5),
                    pct(ex_ms, 0.95),
                    ex_statements / iterations,
                    pct(llm_ms, 0.5),
                    pct(llm_ms, 0.95),
                    statistics.median(guard_ms),
                )
            )
    engine.dispose()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_executor")
    ap.add_argument("--facts", type=int, default=1_000_000)
    ap.add_argument("--tenants", type=int, default=200)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--big-projects", type=int, default=40_000)
    ap.add_argument("--admin-url", default=ADMIN_URL)
    ap.add_argument("--skip-pg", action="store_true")
    args, _unknown = ap.parse_known_args(argv)

    print("compile per plan (µs, median): first = statement cache empty; cached = same shape again")
    print(f"{'template':<22}{'first':>10}{'cached':>10}{'ratio':>8}")
    for name, first, cached in bench_compile():
        print(f"{name:<22}{first:>10.0f}{cached:>10.1f}{first / cached:>7.0f}x")
    if args.skip_pg:
        return 0
    with throwaway_database(args.admin_url) as url:
        t0 = time.perf_counter()
        timings = build(url, args.tenants, args.facts, args.big_projects)
        print(
            f"\nbuilt in {time.perf_counter() - t0:.1f}s: "
            + ", ".join(
                f"{k}={v:,.0f}" if k.startswith("rows.") else f"{k}={v:.1f}s"
                for k, v in timings.items()
            )
        )
        rows = bench_pg(url, args.iterations, args.tenants)
    print(
        f"\nPostgreSQL 15, {args.iterations} runs per question; tenant: a random one of "
        f"{args.tenants} (small: 250 projects) or `{BIG_TENANT}` ({args.big_projects:,} "
        "projects); ms"
    )
    head = ("question", "tenant", "exec p50", "p95", "stmts", "llm p50", "p95", "guard")
    fmt = "{:<28}{:<7}{:>9}{:>8}{:>6}{:>9}{:>8}{:>7}{:>8}{:>8}"
    print(fmt.format(*head, "p50 x", "p95 x"))
    for label, size, e50, e95, stmts, l50, l95, g in rows:
        cells = (label, size, e50, e95, stmts, l50, l95, g, l50 / e50, l95 / e95)
        print(
            "{:<28}{:<7}{:>9.2f}{:>8.2f}{:>6.1f}{:>9.2f}{:>8.2f}{:>7.2f}{:>7.2f}x{:>7.2f}x".format(
                *cells
            )
        )
    print(
        "x = LLM-SQL path / executor (above 1: the executor is faster). stmts = statements "
        "per executor run incl. session setup (the LLM path: setup + 1). guard = sqlglot "
        "parse + whitelist walk + regenerate, part of the LLM time."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
