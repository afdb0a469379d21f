"""The operator capability table (`qdsl.dsl.operators`) is what every reader of
operators goes by: the catalog loader, the normalizer's value checks, the
binder's fact semantics, the JSON Schema and the planner prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdsl.dsl.bound import POSITIVE_FACT_OPS
from qdsl.dsl.catalog import OPERATORS_BY_TYPE, Catalog, FieldType, demo_catalog, load_catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, Scalar, Value
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.operators import (
    ALL_TYPES,
    CAPABILITIES,
    HOLDS_FACT,
    Arity,
    capability,
    operators_for,
    value_shapes,
    with_arity,
)
from qdsl.dsl.plan.schema import plan_json_schema
from qdsl.planner.prompt import _RULES

DEPLOYMENTS = Path(__file__).resolve().parents[1] / "deployments"


def _catalogs() -> list[tuple[str, Catalog]]:
    found = [("demo", demo_catalog())]
    found += [(p.parent.name, load_catalog(p)) for p in sorted(DEPLOYMENTS.glob("*/catalog.toml"))]
    return found


def test_every_operator_has_one_row_and_every_type_is_named() -> None:
    assert set(CAPABILITIES) == set(Operator)
    assert {t.value for t in FieldType} == ALL_TYPES
    for op, row in CAPABILITIES.items():
        assert row.operator is op and row.types <= ALL_TYPES and row.types


def test_the_loader_allows_per_type_what_the_table_says() -> None:
    assert {t: operators_for(t.value) for t in FieldType} == OPERATORS_BY_TYPE
    # spot checks of the table itself, so a wrong row cannot pass as derived
    assert Operator.BETWEEN in OPERATORS_BY_TYPE[FieldType.DATE]
    assert Operator.CONTAINS not in OPERATORS_BY_TYPE[FieldType.ENUM]
    assert OPERATORS_BY_TYPE[FieldType.BOOL] == {
        Operator.EQUALS,
        Operator.NOT_EQUALS,
        Operator.IS_NULL,
    }


@pytest.mark.parametrize(
    ("name", "catalog"), _catalogs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_declared_operator_of_every_catalog_is_in_the_table(
    name: str, catalog: Catalog
) -> None:
    for ent in catalog.entities.values():
        for fname, spec in ent.fields.items():
            for op in spec.operators:
                assert spec.type.value in capability(op).types, (name, ent.name, fname, op)


def test_fact_semantics_come_from_the_table() -> None:
    assert POSITIVE_FACT_OPS == HOLDS_FACT
    assert {Operator.EQUALS, Operator.EQUALS_OR_ALIAS, Operator.IN, Operator.CONTAINS} == HOLDS_FACT


def test_the_schema_and_the_prompt_state_each_operators_value_shape() -> None:
    text = value_shapes()
    assert plan_json_schema()["$defs"]["Filter"]["properties"]["value"]["description"] == text
    assert " ".join(_RULES.split()).count(" ".join(text.split())) == 1
    for op in Operator:
        assert text.count(op.value) >= 1
    assert with_arity(Arity.LIST) == (Operator.IN, Operator.NOT_IN)
    assert with_arity(Arity.PAIR) == (Operator.BETWEEN,)


def _sample(spec_type: FieldType) -> Scalar:
    return {
        FieldType.NUMBER: 5,
        FieldType.DATE: "2025-01-01",
        FieldType.DATETIME: "2025-01-01T00:00:00+00:00",
        FieldType.BOOL: True,
    }.get(spec_type, "x")


def _shapes(arity: Arity, one: Scalar) -> tuple[Value, list[Value]]:
    """A value of the operator's shape, and values of every other shape."""
    lo, hi = (1, 2) if isinstance(one, int) and not isinstance(one, bool) else (one, one)
    shapes: dict[Arity, Value] = {
        Arity.ONE: one,
        Arity.LIST: (one,),
        Arity.PAIR: (lo, hi),
        Arity.FLAG: True,
    }
    wrong = [v for a, v in shapes.items() if a is not arity and not _fits(arity, v)]
    return shapes[arity], wrong


def _fits(arity: Arity, value: Value) -> bool:
    # a one-element list is no pair and a flag is a scalar: only truly other shapes
    if arity is Arity.ONE:
        return not isinstance(value, tuple)
    if arity is Arity.LIST:
        return isinstance(value, tuple) and len(value) > 0
    if arity is Arity.PAIR:
        return isinstance(value, tuple) and len(value) == 2
    return isinstance(value, bool)


@pytest.mark.parametrize(
    ("name", "catalog"), _catalogs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_normalizer_refuses_a_value_of_another_shape(name: str, catalog: Catalog) -> None:
    checked = 0
    for ent in catalog.entities.values():
        qt = QueryType.LIST if QueryType.LIST in ent.query_types else ent.query_types[0]
        for fname, spec in ent.fields.items():
            if spec.sensitive or spec.type is FieldType.ENUM:
                continue  # enum values must be known values; checked elsewhere
            for op in spec.operators:
                right, wrong = _shapes(capability(op).arity, _sample(spec.type))
                for value in wrong:
                    plan = Plan(
                        query_type=qt,
                        entity_type=ent.name,
                        filters=(Filter(field=fname, operator=op, value=value),),
                    )
                    with pytest.raises(PlanError) as refused:
                        normalize(plan, catalog, PlanContext(tenant_id="t1"))
                    assert refused.value.subtype == "invalid_value", (name, fname, op, value)
                    checked += 1
                plan = Plan(
                    query_type=qt,
                    entity_type=ent.name,
                    filters=(Filter(field=fname, operator=op, value=right),),
                )
                normalize(plan, catalog, PlanContext(tenant_id="t1"))
    assert checked > 0
