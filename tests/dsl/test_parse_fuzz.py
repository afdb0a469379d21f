"""Whatever text arrives, parsing returns a plan or raises a typed PlanError.

Strings come from the grammar itself (`hypothesis.extra.lark.from_lark`): raw
(terminals glued together, mostly invalid) and spaced (every terminal padded,
mostly valid plans, which must then print and parse back equal), plus arbitrary
text.
"""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.dsl.plan.closure import QUERY_TYPE_SYNONYMS
from qdsl.dsl.plan.parser import make_parser, parse_text
from qdsl.dsl.plan.printer import to_text

QUERY_WORDS = sorted({q.value for q in QueryType} | set(QUERY_TYPE_SYNONYMS))
FIELD_WORDS = ["status", "title", "project", "limit", "and", "有没有", "market_theme"]


@functools.cache
def grammar() -> Lark:
    return make_parser("lalr", cache=False)


def spaced_terminals(parser: Lark) -> dict[str, st.SearchStrategy[str]]:
    """Each terminal padded with spaces, NAME drawn from plausible words."""
    out: dict[str, st.SearchStrategy[str]] = {}
    for terminal in parser.terminals:
        pattern = terminal.pattern
        if terminal.name == "NAME":
            strategy = st.sampled_from(QUERY_WORDS + FIELD_WORDS + ["facts_first", "v1"])
        elif terminal.name == "COMMENT":
            strategy = st.just("# note\n")
        elif pattern.type == "str":
            strategy = st.just(str(pattern.value))
        else:
            strategy = st.from_regex(pattern.to_regexp(), fullmatch=True)
        out[terminal.name] = strategy.map(lambda s: f" {s} ")
    return out


def parses_or_fails_typed(text: str) -> Plan | None:
    try:
        return parse_text(text)
    except PlanError as error:
        assert error.subtype
        assert error.message
        assert error.hint
        return None


@settings(max_examples=150, deadline=None)
@given(from_lark(grammar()))
def test_raw_grammar_strings_parse_or_fail_typed(text: str) -> None:
    parses_or_fails_typed(text)


@settings(max_examples=150, deadline=None)
@given(from_lark(grammar(), explicit=spaced_terminals(grammar())))
def test_spaced_grammar_strings_round_trip(text: str) -> None:
    plan = parses_or_fails_typed(text)
    if plan is not None:
        assert parse_text(to_text(plan)) == plan


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_any_text_parses_or_fails_typed(text: str) -> None:
    parses_or_fails_typed(text)
