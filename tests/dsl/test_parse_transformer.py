"""The transformer handles exactly the grammar's rules, and spans point at the text."""

from __future__ import annotations

import pytest
from lark import Token, Tree

from qdsl.dsl.errors import InternalError
from qdsl.dsl.ir import Span
from qdsl.dsl.plan.parser import get_parser, make_parser, parse_text
from qdsl.dsl.plan.transform import _HANDLERS, PlanTransformer


def grammar_rule_names() -> set[str]:
    names: set[str] = set()
    for rule in make_parser("lalr", cache=False).rules:
        name = rule.alias or rule.origin.name
        # `?rule` with one child and `_rule` are inlined and never reach the transformer.
        inlined = rule.options.expand1 and not rule.alias and len(rule.expansion) == 1
        if not inlined and not str(name).startswith("_"):
            names.add(str(name))
    return names


def test_every_rule_has_exactly_one_handler() -> None:
    assert grammar_rule_names() == set(_HANDLERS)


def test_rules_dispatch_through_the_handler_table() -> None:
    # A method named like a rule would bypass the table (and its unknown-rule guard).
    assert not [name for name in _HANDLERS if hasattr(PlanTransformer, name)]


def test_unknown_rule_raises_instead_of_passing_through() -> None:
    tree: Tree[Token] = Tree("start", [Tree("mystery", [])])
    with pytest.raises(InternalError) as caught:
        PlanTransformer("").transform(tree)
    assert caught.value.code == "internal/unhandled_rule"


def test_spans_point_at_the_text() -> None:
    text = 'count project\nwhere status = "active" and id in ("1")\norder by id desc\nabout run 12'
    plan = parse_text(text)
    spans = [plan.span, plan.filters[0].span, plan.filters[1].span, plan.sort[0].span]
    spans.append(plan.scope.referenced_objects[0].span)
    assert all(isinstance(s, Span) for s in spans)
    pieces = [text[s.start_pos : s.end_pos] for s in spans if s is not None]
    assert pieces == [text, 'status = "active"', 'id in ("1")', "id desc", "run 12"]
    first = plan.filters[0].span
    assert first is not None
    assert (first.line, first.column, first.end_line, first.end_column) == (2, 7, 2, 24)


def test_parser_is_built_once() -> None:
    assert get_parser() is get_parser()


def test_bom_is_dropped() -> None:
    assert parse_text("\ufeffcount project") == parse_text("count project")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('list product where name contains "Hose"', "name"),
        ('list order where customer.name contains "Felix"', "customer.name"),
        ('list order where lines.product.name contains "Hose"', "lines.product.name"),
    ],
)
def test_contains_after_a_field_path_is_the_operator(text: str, field: str) -> None:
    # a grouping's grain (a NAME) may follow a field path, so `contains` competes with it
    (only,) = parse_text(text).filters
    assert (only.field, only.operator.value) == (field, "contains")


def test_a_name_beginning_with_contains_stays_a_name() -> None:
    (only,) = parse_text('list product where contains_x = "a"').filters
    assert (only.field, only.operator.value) == ("contains_x", "equals")
