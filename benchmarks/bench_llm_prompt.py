"""The LLM planner's prompt and overhead against the LLM-SQL path it replaces.

Per question, on the demo catalog and a generated 50-entity catalog:

1. Prompt size (bytes; approximate tokens are bytes / 4, no tokenizer): the
   planner's bounded first prompt against a text-to-SQL prompt for the same
   catalog (`schema_prompt`: the tables as CREATE TABLE statements with every
   column, the allowed values of enum columns, the references and the facts
   table, plus the tenant rule), which is what an LLM writing SQL needs to
   know. The unbounded prompt (the whole catalog) is printed beside it.
   Sizes are exact, so there is no spread.
2. Overhead per attempt, the LLM itself a stub that answers at once: the
   planner (prompt, parse the reply, normalize and validate the plan) against
   the LLM-SQL path (the schema prompt, then the sqlglot guard on the SQL
   reply: parse, whitelist, tenant predicate, regenerate;
   `benchmarks.sqlguard`), interleaved; goal ≤ 1×, as for plan_and_answer.

    python -m benchmarks.bench_llm_prompt [--quick] [--repeats N]
"""

from __future__ import annotations

import sys
from typing import Any

from benchmarks import harness as H
from benchmarks.sqlguard import Whitelist, guard
from benchmarks.workload import facts_exists
from qdsl.dsl.catalog import Catalog, catalog_from_mapping, demo_catalog
from qdsl.executor.tables import FACT_COLUMNS
from qdsl.planner import LLMPlanner, RulePlanner
from qdsl.planner.prompt import approx_tokens

TENANT = "t1"
_STATES = ["draft", "open", "review", "approved", "shipped", "returned", "archived", "lost"]


def wide_catalog(n: int = 50) -> Catalog:
    """A catalog of `n` entities of one made-up domain, each linked to the previous."""
    entities: dict[str, Any] = {}
    for i in range(n):
        name = f"gadget{i}"
        fields: dict[str, Any] = {
            "title": {"column": "title", "type": "text", "operators": ["equals", "contains"]},
            "stage": {
                "column": "stage",
                "type": "enum",
                "values": _STATES,
                "operators": ["equals", "not_equals", "in"],
                "synonyms": ["stage"],
                "aliases": {s: [s, f"{s} state"] for s in _STATES},
            },
            "weight": {"column": "weight", "type": "number", "operators": ["gt", "lt", "between"]},
        }
        if i:
            fields["parent_id"] = {
                "column": "parent_id",
                "type": "id",
                "operators": ["equals"],
                "references": f"gadget{i - 1}",
            }
        entities[name] = {
            "table": f"gadgets_{i}",
            "id": "id",
            "tenant": "tenant_id",
            "label": "title",
            "query_types": ["existence", "count", "list", "status"],
            "synonyms": [f"{name}s", f"kind {i} gadget"],
            "fields": fields,
        }
    return catalog_from_mapping({"entities": entities}, source="wide")


def schema_prompt(question: str, catalog: Catalog, tenant: str) -> str:
    """A text-to-SQL prompt for `catalog`: what an LLM writing SQL must be told."""
    from qdsl.executor.tables import entity_columns

    parts = [
        "Write one SQL SELECT that answers the question. Only these tables exist.",
        f"Every table you read must be filtered with <alias>.tenant_id = '{tenant}'.",
    ]
    for spec in catalog.entities.values():
        columns = []
        for column, kind in entity_columns(spec).items():
            line = f"  {column} {kind.value if kind is not None else 'text'}"
            field = next((f for f in spec.fields.values() if f.column == column), None)
            if field is not None and field.values:
                line += f" -- one of: {', '.join(field.values)}"
            if field is not None and field.references:
                target = catalog.entity(field.references)
                line += f" REFERENCES {target.table}({target.id})"
            columns.append(line)
        parts.append(f"CREATE TABLE {spec.table} (\n" + ",\n".join(columns) + "\n);")
    facts = ",\n".join(f"  {c} text" for c in FACT_COLUMNS)
    parts.append(f"CREATE TABLE {catalog.facts.table} (\n{facts}\n);")
    parts.append(f"Question: {question}\nSQL:")
    return "\n\n".join(parts)


def cases() -> list[tuple[str, Catalog, str, str]]:
    """(catalog label, catalog, question, the SQL an LLM would answer with)."""
    demo, wide = demo_catalog(), wide_catalog(50)
    t = TENANT
    return [
        (
            "demo",
            demo,
            "现在有多少个进行中的项目",
            f"SELECT COUNT(*) FROM projects AS p WHERE p.tenant_id = '{t}' AND p.status = 'active'",
        ),
        (
            "demo",
            demo,
            "Are there any A-share projects?",
            f"SELECT p.id FROM projects AS p WHERE p.tenant_id = '{t}' AND "
            + facts_exists(demo, t, "market_theme", "A股")
            + " LIMIT 1",
        ),
        (
            "wide50",
            wide,
            "How many gadget7s are in review?",
            f"SELECT COUNT(*) FROM gadgets_7 AS g WHERE g.tenant_id = '{t}' AND g.stage = 'review'",
        ),
        (
            "wide50",
            wide,
            "list gadget42s heavier than 10",
            f"SELECT g.id, g.title FROM gadgets_42 AS g WHERE g.tenant_id = '{t}' "
            "AND g.weight > 10 LIMIT 50",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_llm_prompt", __doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args, _ = parser.parse_known_args(argv)
    repeats, inner = (2, 1) if args.quick else (args.repeats, 5)
    sizes: list[list[str]] = []
    ratios: list[H.Ratio] = []
    whitelists: dict[str, Whitelist] = {}
    for label, catalog, question, sql in cases():
        wl = whitelists.setdefault(label, Whitelist(catalog))
        full = LLMPlanner(str, prompt_budget=None).first_prompt(question, catalog)
        bounded = LLMPlanner(str).first_prompt(question, catalog)
        schema = schema_prompt(question, catalog, TENANT)
        guard(sql, TENANT, wl)  # the LLM's SQL passes the guard
        b_bytes, s_bytes = len(bounded.encode()), len(schema.encode())
        sizes.append(
            [
                f"{label}: {question}",
                f"{b_bytes:,} (~{approx_tokens(bounded):,} tokens)",
                f"{s_bytes:,} (~{approx_tokens(schema):,} tokens)",
                f"{b_bytes / s_bytes:.2f}×",
                f"{len(full.encode()):,}",
            ]
        )
        reply = RulePlanner().plan(question, catalog=catalog).text

        def stub(prompt: str, reply: str = reply) -> str:
            return reply

        planner = LLMPlanner(stub)

        def plan(p: LLMPlanner = planner, q: str = question, c: Catalog = catalog) -> object:
            return p.plan(q, catalog=c)

        def llm_sql(
            q: str = question, c: Catalog = catalog, s: str = sql, w: Whitelist = wl
        ) -> str:
            schema_prompt(q, c, TENANT)
            return guard(s, TENANT, w)

        ratios.append(
            H.measure(
                f"{label}: {question}",
                ("LLM planner", plan),
                ("schema prompt + sqlglot guard", llm_sql),
                H.at_most(1),
                repeats=repeats,
                inner=inner,
            )
        )
    print("\n### First prompt size: the LLM planner vs a text-to-SQL schema prompt\n")
    head = ["question", "planner, bounded (B)", "schema prompt (B)", "ratio"]
    head.append("planner, whole catalog (B)")
    print(H.table(sizes, head))
    print("\nsizes are exact: no spread, no goal")
    H.print_ratios("Overhead per attempt (the LLM a stub): planner vs LLM SQL + guard", ratios)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
