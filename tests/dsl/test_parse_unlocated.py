"""Parsing without spans (the compile path) changes nothing but the spans.

`parse_text(text, spans=False)` runs a second parser that transforms as it
parses and tracks no positions; `compile_source` uses it and compiles a
refused text plan again with spans. Whatever the text, the outcome is the
one the located path gives: an equal plan, or the same error with the same
line, column and excerpt.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from test_parse_fuzz import grammar, spaced_terminals

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.parser import _unlocated_parser, parse_text
from qdsl.dsl.plan.plan_cache import PlanCache, compile_source

CATALOG = demo_catalog()


def outcome(run: object) -> tuple[str, object]:
    assert callable(run)
    try:
        result = run()
    except QdslError as error:
        return "error", (type(error), error.to_dict())
    if isinstance(result, Plan):
        return "plan", (result, result.to_json_dict())
    return "normalized", (result.plan, result.plan.to_json_dict(), result.warnings)


def same_parse(text: str) -> None:
    located = outcome(lambda: parse_text(text))
    assert outcome(lambda: parse_text(text, spans=False)) == located
    if located[0] == "plan":
        # the unlocated parser itself accepted it: the fast path is the one taken
        assert _unlocated_parser().parse(text) == located[1][0]


@settings(max_examples=150, deadline=None)
@given(from_lark(grammar()))
def test_raw_grammar_strings(text: str) -> None:
    same_parse(text)


@settings(max_examples=150, deadline=None)
@given(from_lark(grammar(), explicit=spaced_terminals(grammar())))
def test_spaced_grammar_strings(text: str) -> None:
    same_parse(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_any_text(text: str) -> None:
    same_parse(text)


REFUSED = [
    'count project where status == "active"',  # syntax
    "count project\nwhere status = active",  # bare word
    'count project where status = "\\q"',  # bad escape (transformer, at a token)
    "count project limit 0",  # model validation (transformer, at a clause)
    "count project limit 5\nlimit 6",  # duplicate clause
    "count project retrieval freshness_days 0",  # model validation inside a clause
    'count project\nwhere nosuchfield = "x"',  # normalizer, at the filter's span
    "count nowhere",  # normalizer, at the plan's span
    "list project\nselect id\norder by nosuch desc",  # normalizer, at the sort's span
    "status project about nosuch 64",  # normalizer, at the reference's span
    "plan v2\ncount project",  # version
    "count project contract nosuch",  # closure word
]


@pytest.mark.parametrize("text", REFUSED)
def test_refusals_are_the_located_ones(text: str) -> None:
    ctx = PlanContext(tenant_id="t1")
    expected = outcome(lambda: normalize(load_plan(text, catalog=CATALOG), CATALOG, ctx))
    assert expected[0] == "error"
    got = outcome(lambda: compile_source(text, CATALOG, ctx, cache=PlanCache()))
    assert got == expected
    assert "line" in expected[1][1]["details"]  # type: ignore[index]


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r'"(?:[^"\\\n])*"', fullmatch=True))
def test_a_string_without_escapes_decodes_as_json_does(written: str) -> None:
    # The transformer skips the JSON decoder when a string has no backslash.
    plan = parse_text(f"count project where title = {written}")
    assert plan.filters[0].value == json.loads(written, strict=False)
