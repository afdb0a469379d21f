"""A comparison states a difference only where the two objects differ in meaning.

Found by the generated-deployment property (tests/generated/found.toml): two
objects whose facts spell one value two ways ("US stocks", "美股": aliases of
one canonical value) were reported as differing on that field.
"""

from __future__ import annotations

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.render import render

CATALOG = demo_catalog()


def _compare(
    facts: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]], status: tuple[str, str]
) -> dict[str, object]:
    raw = Plan(
        query_type=QueryType.COMPARE,
        entity_type="project",
        filters=(Filter(field="id", operator=Operator.IN, value=("64", "65")),),
    )
    plan = normalize(raw, CATALOG, PlanContext(tenant_id="t1")).plan
    rows = tuple(
        ResultRow(
            entity_type="project",
            entity_id=ident,
            tenant_id="t1",
            label=f"P{ident}",
            values={"id": ident, "status": s},
            facts=f,
        )
        for ident, f, s in zip(("64", "65"), facts, status, strict=True)
    )
    result = ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=QueryType.COMPARE,
        entity_type="project",
        template="compare",
        plan_hash="h",
        rows=rows,
    )
    return render(plan, result, language="en", catalog=CATALOG).data


def test_two_spellings_of_one_fact_value_are_no_difference() -> None:
    data = _compare(
        ({"market_theme": ("US stocks",)}, {"market_theme": ("美股",)}), ("active", "active")
    )
    assert data["differences"] == []


def test_other_values_of_a_fact_still_differ() -> None:
    data = _compare(
        ({"market_theme": ("US stocks",)}, {"market_theme": ("A-share",)}), ("active", "closed")
    )
    fields = [d["field"] for d in data["differences"]]  # type: ignore[attr-defined]
    assert fields == ["status", "market_theme"]
