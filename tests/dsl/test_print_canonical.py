"""The canonical printer and the plan JSON Schema."""

from __future__ import annotations

import json

import pytest

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, ObjectRef, Operator, Plan, QueryType, RetrievalPolicy, Scope
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text
from qdsl.dsl.plan.schema import plan_json_schema


def test_minimal_plan_prints_header_only() -> None:
    assert to_text(parse_text("count project")) == "plan v1\ncount project\n"


def test_same_meaning_prints_the_same() -> None:
    messy = (
        'plan v1 有没有 project on_empty answer_not_found where market_theme ~= "A股"\n'
        "# a comment\nretrieval facts_first verify EVIDENCE_BACKED"
    )
    tidy = 'existence project where market_theme ~= "A股" verify evidence_backed'
    assert to_text(parse_text(messy)) == to_text(parse_text(tidy))


def test_scope_ids_are_bare_only_when_they_read_back_unchanged() -> None:
    plan = Plan(
        query_type=QueryType.STATUS,
        entity_type="project",
        scope=Scope(
            tenant_id="t-1",
            project_id="0064",
            referenced_objects=(ObjectRef(entity_type="project", id="6 4"),),
        ),
    )
    text = to_text(plan)
    assert text == (
        'plan v1\nstatus project\ntenant "t-1"\nproject 0064\nabout project "6 4"\n'
    )
    assert parse_text(text) == plan


def test_retrieval_defaults_are_left_out_and_changes_spelled() -> None:
    base = Plan(query_type=QueryType.EXPLAIN, entity_type="doc")
    assert "retrieval" not in to_text(base)
    changed = base.model_copy(
        update={"retrieval_policy": RetrievalPolicy(facts_first=False, freshness_days=7)}
    )
    assert "retrieval no_facts_first, freshness_days 7\n" in to_text(changed)


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (
            Plan(query_type=QueryType.LIST, entity_type="title; drop table projects"),
            "cannot print the name 'title; drop table projects'",
        ),
        (
            Plan(
                query_type=QueryType.LIST,
                entity_type="project",
                filters=(Filter(field="status", operator=Operator.IN, value="active"),),
            ),
            "cannot print in with the value 'active'",
        ),
        (
            Plan(
                query_type=QueryType.LIST,
                entity_type="project",
                filters=(Filter(field="budget", operator=Operator.GT, value=float("inf")),),
            ),
            "cannot print the number inf",
        ),
    ],
)
def test_plans_the_grammar_cannot_say_are_refused(plan: Plan, message: str) -> None:
    with pytest.raises(PlanError) as caught:
        to_text(plan)
    assert caught.value.subtype == "unprintable_plan"
    assert caught.value.message == message


def test_schema_lists_enums_and_has_no_spans() -> None:
    schema = plan_json_schema()
    dumped = json.dumps(schema)
    assert '"span"' not in dumped
    assert "Span" not in schema["$defs"]
    assert schema["$defs"]["Operator"]["enum"] == [op.value for op in Operator]
    assert schema["$defs"]["QueryType"]["enum"] == [q.value for q in QueryType]
    assert schema["required"] == ["query_type", "entity_type"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Scope"]["properties"]["tenant_bound"]["const"] is True
    # Every property the schema offers is one the JSON form accepts.
    assert set(schema["properties"]) == set(Plan.model_fields) - {"span"}


def test_schema_is_a_fresh_copy() -> None:
    plan_json_schema()["properties"].clear()
    assert plan_json_schema()["properties"]
