"""Any IR prints to text that parses back equal, and survives the JSON form."""

from __future__ import annotations

import json

from hypothesis import given, settings
from strategies import plans

from qdsl.dsl.ir import Plan
from qdsl.dsl.plan.json_form import parse_json
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text


@settings(max_examples=200, deadline=None)
@given(plans)
def test_text_round_trip(plan: Plan) -> None:
    text = to_text(plan)
    assert parse_text(text) == plan, text
    assert to_text(parse_text(text)) == text


@settings(max_examples=150, deadline=None)
@given(plans)
def test_json_round_trip(plan: Plan) -> None:
    dumped = plan.model_dump(mode="json")
    assert parse_json(dumped) == plan
    assert parse_json(json.dumps(dumped, ensure_ascii=False)) == plan
    assert load_plan(json.dumps(dumped)) == plan


@settings(max_examples=50, deadline=None)
@given(plans)
def test_text_and_json_forms_agree(plan: Plan) -> None:
    from_text = parse_text(to_text(plan))
    assert parse_json(from_text.model_dump(mode="json")) == from_text
