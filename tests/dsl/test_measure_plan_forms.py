"""An aggregate's measure in the plan language: its text and JSON forms, the schemas
that describe it, and the normalizer's refusals (typed, with the alternatives), on
the demo and the online shop's catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdsl.dsl.catalog import Catalog, demo_catalog, load_catalog
from qdsl.dsl.errors import PlanError, PolicyError
from qdsl.dsl.ir import Aggregation, Measure, QueryType
from qdsl.dsl.normalize import normalize
from qdsl.dsl.plan.json_form import parse_json
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text
from qdsl.dsl.plan.schema import plan_json_schema
from qdsl.planner.schema import catalog_plan_schema

SHOP = load_catalog(Path(__file__).parents[1] / "deployments" / "shop" / "catalog.toml")


@pytest.mark.parametrize(
    ("text", "measure", "json"),
    [
        ("measure avg(amount)", Measure(function=Aggregation.AVG, field="amount"),
         {"function": "avg", "field": "amount"}),
        ("measure count()", Measure(function=Aggregation.COUNT), {"function": "count"}),
        ("measure count_distinct(order_id)",
         Measure(function=Aggregation.COUNT_DISTINCT, field="order_id"),
         {"function": "count_distinct", "field": "order_id"}),
        ("measure average_order_value", Measure(name="average_order_value"),
         {"name": "average_order_value"}),
    ],
)  # fmt: skip
def test_the_text_and_json_forms_agree(text: str, measure: Measure, json: dict[str, str]) -> None:
    plan = parse_text(f'aggregate payment where method = "card" {text}')
    assert plan.measure == measure
    assert text in to_text(plan)
    dumped = plan.to_json_dict()
    assert dumped["measure"] == json
    assert parse_json(dumped) == plan
    # a plan without a measure keeps its JSON bytes (and its digest)
    assert "measure" not in parse_text("count payment").to_json_dict()


def test_function_words_close_over_synonyms() -> None:
    assert parse_text("aggregate payment measure mean(amount)").measure == Measure(
        function=Aggregation.AVG, field="amount"
    )
    with pytest.raises(PlanError) as err:
        parse_text("aggregate payment measure median(amount)")
    assert err.value.subtype == "unknown_aggregation" and "avg" in (err.value.hint or "")
    with pytest.raises(PlanError) as err:
        parse_json({"query_type": "aggregate", "entity_type": "payment",
                    "measure": {"name": "total_paid", "function": "sum"}})  # fmt: skip
    assert err.value.details["pointer"] == "/measure"


def test_the_schemas_describe_the_measure() -> None:
    schema = plan_json_schema()
    assert set(schema["$defs"]["Aggregation"]["enum"]) == {a.value for a in Aggregation}
    assert "measure" in schema["properties"]
    narrowed = catalog_plan_schema(SHOP)["$defs"]["Measure"]["properties"]
    names = narrowed["name"]["anyOf"][0]["enum"]
    fields = narrowed["field"]["anyOf"][0]["enum"]
    assert {"average_order_value", "total_paid"} <= set(names)
    assert {"amount", "quantity", "unit_price", "list_price"} <= set(fields)
    assert "order_id" not in fields  # no aggregation listed: not a measure's field


def _normalized(source: str, catalog: Catalog) -> Measure | None:
    return normalize(parse_text(source), catalog).plan.measure


def test_the_legacy_select_is_a_sum_and_normalizing_twice_changes_nothing() -> None:
    demo = demo_catalog()
    plan = normalize(parse_text("aggregate project select budget"), demo).plan
    assert plan.measure == Measure(function=Aggregation.SUM, field="budget")
    assert plan.projection == ()
    assert normalize(plan, demo).plan == plan
    again = normalize(parse_text(to_text(plan)), demo).plan
    assert again == plan


@pytest.mark.parametrize(
    ("source", "subtype", "hint"),
    [
        ("aggregate payment measure avg(method)", "aggregation_not_allowed", "amount"),
        ("aggregate payment measure count(amount)", "aggregation_not_allowed", "count()"),
        ("aggregate payment measure count_distinct(order_id)", "aggregation_not_allowed",
         "declared measures"),
        ("aggregate payment measure sum(amout)", "unknown_field", 'did you mean "amount"'),
        ("aggregate payment measure sum()", "aggregation_not_allowed", "count()"),
        ("aggregate payment measure totl_paid", "unknown_measure", 'did you mean "total_paid"'),
        ("aggregate payment select method measure avg(amount)", "measure_not_named", "measure"),
        ("count payment measure count()", "measure_not_allowed", "aggregate"),
    ],
)  # fmt: skip
def test_a_measure_the_catalog_does_not_allow_is_refused(
    source: str, subtype: str, hint: str
) -> None:
    with pytest.raises(PlanError) as err:
        _normalized(source, SHOP)
    assert err.value.subtype == subtype, err.value
    assert hint in (err.value.hint or ""), err.value.hint


def test_a_sensitive_field_is_never_aggregated() -> None:
    demo = demo_catalog()
    sensitive = next(n for n, f in demo.entities["project"].fields.items() if f.sensitive)
    with pytest.raises(PolicyError) as err:
        _normalized(f"aggregate project measure count_distinct({sensitive})", demo)
    assert err.value.subtype == "sensitive_field"


def test_names_bind_to_the_catalog() -> None:
    assert _normalized("aggregate payment measure Total_Paid", SHOP) == Measure(name="total_paid")
    assert _normalized("aggregate payment measure count()", SHOP) == Measure(
        function=Aggregation.COUNT
    )
    assert QueryType.AGGREGATE in SHOP.entities["payment"].query_types
