"""Parsing cost per plan: text (LALR) and JSON forms, against Earley and sqlglot.

Median microseconds per plan over a small mixed set of plans (the example of
docs/plan-language.md, a bare count, a list with between, a status with a
referenced object, a sorted list, a comparison), each with its equivalent SQL for
`sqlglot.parse_one`. When `dsl.normalize` is present, parse + normalize is
measured as well (demo catalog, tenant t1).

    python -m benchmarks.bench_parse [--reps N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from qdsl.dsl.json_form import parse_json
from qdsl.dsl.parser import get_parser, make_parser, parse_text
from qdsl.dsl.transform import PlanTransformer

# (plan text, equivalent SQL)
CASES: tuple[tuple[str, str], ...] = (
    (
        """plan v1
existence project
where market_theme ~= "A股" and status in ("active", "paused")
select id, title
order by created_at desc
limit 20
retrieval facts_first, fallback_text
verify contract_matches_query_type, evidence_backed, no_total_count_substitution
on_empty answer_not_found
""",
        "SELECT id, title FROM projects WHERE market_theme = 'A股' "
        "AND status IN ('active', 'paused') ORDER BY created_at DESC LIMIT 20",
    ),
    (
        'count project where status = "active"',
        "SELECT COUNT(*) FROM projects WHERE status = 'active'",
    ),
    (
        'list task where project_id = "64" and status != "done"'
        ' and due_at between "2026-10-01" and "2026-10-31"'
        " select id, title, assignee order by due_at asc limit 50",
        "SELECT id, title, assignee FROM tasks WHERE project_id = '64' AND status <> 'done' "
        "AND due_at BETWEEN '2026-10-01' AND '2026-10-31' ORDER BY due_at ASC LIMIT 50",
    ),
    (
        "status project about project 64 select status, budget",
        "SELECT status, budget FROM projects WHERE id = '64'",
    ),
    (
        'list signal where severity >= 3 and kind in ("alert", "metric")'
        " order by severity desc limit 10",
        "SELECT * FROM signals WHERE severity >= 3 AND kind IN ('alert', 'metric') "
        "ORDER BY severity DESC LIMIT 10",
    ),
    (
        'compare project where id in ("64", "65") about project 64, project 65'
        " select title, status, budget",
        "SELECT id, title, status, budget FROM projects WHERE id IN ('64', '65')",
    ),
)


Variant = tuple[str, Callable[[Any], object], list[Any]]


def per_plan_us(variants: list[Variant], reps: int) -> list[float]:
    """Per variant: the median over `reps` passes of the mean µs per input in one pass.

    Passes are interleaved across variants, so background load hits them all alike.
    """
    for _name, run, inputs in variants:  # warm caches (grammar, pydantic validators)
        for item in inputs:
            run(item)
    samples: list[list[float]] = [[] for _ in variants]
    for _ in range(reps):
        for index, (_name, run, inputs) in enumerate(variants):
            start = time.perf_counter_ns()
            for item in inputs:
                run(item)
            samples[index].append((time.perf_counter_ns() - start) / len(inputs) / 1000)
    return [statistics.median(s) for s in samples]


def variants() -> list[Variant]:
    texts = [text for text, _ in CASES]
    dicts = [parse_text(text).model_dump(mode="json") for text in texts]
    json_texts = [json.dumps(d, ensure_ascii=False) for d in dicts]
    lalr = get_parser()
    earley = make_parser("earley")

    def earley_plan(text: str) -> object:
        return PlanTransformer(text).transform(earley.parse(text))

    out: list[Variant] = [
        ("text: parse_text (LALR + IR)", parse_text, texts),
        ("text: LALR tree only", lalr.parse, texts),
        ("text: Earley tree only", earley.parse, texts),
        ("text: Earley + IR", earley_plan, texts),
        ("json: parse_json(str)", parse_json, json_texts),
        ("json: parse_json(dict)", parse_json, dicts),
    ]
    try:
        import sqlglot

        out.append(("sql: sqlglot.parse_one", sqlglot.parse_one, [sql for _, sql in CASES]))
    except ImportError:  # sqlglot is a dev extra
        pass
    try:
        from qdsl.dsl.catalog import demo_catalog
        from qdsl.dsl.normalize import PlanContext, normalize
    except ImportError:
        return out
    catalog, context = demo_catalog(), PlanContext(tenant_id="t1")
    out.append(
        (
            "text: parse_text + normalize",
            lambda t: normalize(parse_text(t), catalog, context),
            texts,
        )
    )
    out.append(
        (
            "json: parse_json + normalize",
            lambda j: normalize(parse_json(j), catalog, context),
            json_texts,
        )
    )
    return out


def check_earley_agrees() -> bool:
    earley = make_parser("earley")
    return all(
        PlanTransformer(text).transform(earley.parse(text)) == parse_text(text) for text, _ in CASES
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_parse", description=__doc__)
    parser.add_argument("--reps", type=int, default=200, help="timed passes per variant")
    args = parser.parse_args(argv)
    chosen = variants()
    results = list(
        zip([name for name, _, _ in chosen], per_plan_us(chosen, args.reps), strict=True)
    )
    base = results[0][1]
    print(f"{len(CASES)} plans, {args.reps} passes; median µs per plan")
    print(f"{'variant':<34} {'µs/plan':>10} {'× parse_text':>13}")
    for name, us in results:
        print(f"{name:<34} {us:>10.1f} {us / base:>13.2f}")
    print(f"Earley + IR equals LALR + IR on every plan: {check_earley_agrees()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
