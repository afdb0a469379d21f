"""Plan -> bound SQL, against the guard it replaces: LLM-written SQL checked by sqlglot.

qdsl: the plan (JSON, or plan text) compiled as the pipeline compiles it
(`qdsl.dsl.plan.plan_cache.compile_source`: loaded, normalized and bound for the
tenant) and prepared (statements and bound parameters) for PostgreSQL, each
statement rendered to SQL text: everything between the planner's output and
the driver. "Warm": the same plan seen before (a compile-cache hit, as in a
long-running service); the text rows and "first sight" compile every call
(an empty compile cache; the executor's statement shapes are known).
The alternative: the SQL an LLM would write for the same question
(`benchmarks.workload`), through `benchmarks.sqlguard.guard` (parse,
whitelist walk, tenant predicate on every table incl. the facts EXISTS,
regenerate) with sqlglot's compiled build. One call covers all six demo plans.

    python -m benchmarks.bench_compile [--quick] [--repeats N]
"""

from __future__ import annotations

import sys
from typing import Any

from benchmarks import harness as H
from benchmarks.sqlguard import Whitelist, build_label, compiled_build, guard
from benchmarks.workload import demo_cases
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import PLANS, PlanCache, compile_source
from qdsl.executor.compile import prepare, render

TENANT = "t1"
DIALECT = "postgresql"


def qdsl_compile(
    source: str, catalog: Catalog, tenant: str, cache: PlanCache = PLANS
) -> tuple[list[str], dict[str, Any]]:
    """The plan as the executor receives it: SQL of its statements and their parameters."""
    bound = compile_source(source, catalog, PlanContext(tenant_id=tenant), cache=cache).bound
    assert bound is not None
    prep = prepare(bound, catalog, DIALECT, tenant)
    return [render(stmt, DIALECT)[0] for _role, stmt in prep.statements.named()], prep.params


def run(repeats: int, inner: int) -> list[H.Ratio]:
    catalog = demo_catalog()
    wl = Whitelist(catalog)
    cases = demo_cases()
    texts = [c.text for c in cases]
    jsons = [c.json for c in cases]
    sqls = [c.sql(TENANT) for c in cases]

    def guard_all() -> None:
        for sql in sqls:
            guard(sql, TENANT, wl)

    def compile_all(sources: list[str], *, warm: bool = True) -> None:
        cache = PLANS if warm else PlanCache()
        for source in sources:
            qdsl_compile(source, catalog, TENANT, cache)

    alt = (f"LLM SQL + {build_label().split(' (')[0]} guard", guard_all)
    json_ratio = H.measure(
        "JSON plan → bound SQL, warm",
        ("JSON plan", lambda: compile_all(jsons)),
        alt,
        H.faster(15),
        repeats=repeats,
        inner=inner,
    )
    text_ratio = H.measure(
        "text plan → SQL",
        ("plan text", lambda: compile_all(texts, warm=False)),
        alt,
        H.faster(2.5),
        repeats=repeats,
        inner=inner,
    )
    json_first = H.measure(
        "JSON plan → bound SQL, first sight (time ratio)",
        ("JSON plan", lambda: compile_all(jsons, warm=False)),
        alt,
        None,
        repeats=repeats,
        inner=inner,
    )
    return [
        H.record("json_compile", json_ratio),
        H.record("text_compile", text_ratio),
        json_first,
    ]


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_compile", __doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args, _ = parser.parse_known_args(argv)
    repeats, inner = (2, 2) if args.quick else (args.repeats, 20)
    ratios = run(repeats, inner)
    H.print_ratios(
        f"Plan → SQL: qdsl vs LLM SQL + sqlglot guard ({len(demo_cases())} demo plans per call)",
        ratios,
        f"guard: {build_label()}"
        + ("" if compiled_build() else " — install `sqlglot[c]` for the compiled build"),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
