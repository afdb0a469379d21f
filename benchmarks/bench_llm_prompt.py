"""LLM prompt size per question, demo catalog vs a generated 50-entity catalog,
and the LLM planner's own overhead per attempt (prompt, parse, normalize; the
LLM itself is a stub that answers at once).

Sizes are bytes and approximate tokens (bytes / 4, no tokenizer). Run:
`python -m benchmarks.bench_llm_prompt [--quick]`.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from qdsl.dsl.catalog import Catalog, catalog_from_mapping, demo_catalog
from qdsl.planner import LLMPlanner, RulePlanner
from qdsl.planner.prompt import approx_tokens

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


def _overhead_ms(planner: LLMPlanner, question: str, catalog: Catalog, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        planner.plan(question, catalog=catalog)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    quick = "--quick" in (argv or [])
    demo, wide = demo_catalog(), wide_catalog(50)
    cases = [
        ("demo", demo, "现在有多少个进行中的项目"),
        ("demo", demo, "Are there any A-share projects?"),
        ("wide50", wide, "How many gadget7s are in review?"),
        ("wide50", wide, "list gadget42s heavier than 10"),
    ]
    head = ("catalog", "question", "full B", "bounded B", "~tokens", "ms/attempt")
    print(f"{head[0]:8} {head[1]:36} {head[2]:>8} {head[3]:>9} {head[4]:>8} {head[5]:>10}")
    for label, catalog, question in cases:
        full = LLMPlanner(str, prompt_budget=None).first_prompt(question, catalog)
        planner = LLMPlanner(str)
        bounded = planner.first_prompt(question, catalog)
        reply = RulePlanner().plan(question, catalog=catalog).text

        def stub(prompt: str, reply: str = reply) -> str:
            return reply

        ms = _overhead_ms(LLMPlanner(stub), question, catalog, rounds=3 if quick else 20)
        print(
            f"{label:8} {question[:36]:36} {len(full.encode()):>8} {len(bounded.encode()):>9} "
            f"{approx_tokens(bounded):>8} {ms:>10.2f}"
        )
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
