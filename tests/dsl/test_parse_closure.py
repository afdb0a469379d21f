"""Enum closure: case, width, spacing and synonyms resolve to one member; the rest fail closed."""

from __future__ import annotations

import pytest

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import AnswerContract, EmptyPolicy, Operator, QueryType, SortDirection, ValueSource
from qdsl.dsl.plan import closure
from qdsl.dsl.plan.parser import parse_text


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("existence", QueryType.EXISTENCE),
        ("Exists", QueryType.EXISTENCE),
        ("exist", QueryType.EXISTENCE),
        ("ANY", QueryType.EXISTENCE),
        ("有没有", QueryType.EXISTENCE),
        ("是否存在", QueryType.EXISTENCE),
        ("how many", QueryType.COUNT),
        ("How-Many", QueryType.COUNT),
        ("ｃｏｕｎｔ", QueryType.COUNT),
        ("多少", QueryType.COUNT),
        ("which", QueryType.LIST),
        ("哪些", QueryType.LIST),
        ("state", QueryType.STATUS),
        ("why", QueryType.EXPLAIN),
        ("为什么", QueryType.DIAGNOSE),
        ("vs", QueryType.COMPARE),
        ("unknown", QueryType.UNKNOWN),
    ],
)
def test_query_type_words(word: str, expected: QueryType) -> None:
    assert closure.query_type(word) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("==", Operator.EQUALS),
        ("eq", Operator.EQUALS),
        ("<>", Operator.NOT_EQUALS),
        ("NE", Operator.NOT_EQUALS),
        ("not in", Operator.NOT_IN),
        ("Not-In", Operator.NOT_IN),
        ("~=", Operator.EQUALS_OR_ALIAS),
        ("alias", Operator.EQUALS_OR_ALIAS),
        ("like", Operator.CONTAINS),
        (">=", Operator.GTE),
        ("is null", Operator.IS_NULL),
        ("between", Operator.BETWEEN),
    ],
)
def test_operator_words(word: str, expected: Operator) -> None:
    assert closure.operator(word) is expected


def test_other_enums() -> None:
    assert closure.answer_contract("Yes-No") is AnswerContract.YES_NO_WITH_EVIDENCE
    assert closure.value_source("ctx") is ValueSource.CONTEXT
    assert closure.sort_direction("Descending") is SortDirection.DESC
    assert closure.empty_policy("ask") is EmptyPolicy.CLARIFY
    assert closure.is_not_null_word("is not null")


def test_unknown_operator_suggests_close_members() -> None:
    with pytest.raises(PlanError) as caught:
        closure.operator("containz")
    assert caught.value.code == "validation/unknown_operator"
    assert caught.value.hint == 'did you mean "contains"?'
    assert caught.value.details["suggestions"] == ["contains"]


def test_word_far_from_everything_lists_the_members() -> None:
    with pytest.raises(PlanError) as caught:
        closure.empty_policy("zzzz")
    assert caught.value.hint == "use one of: answer_not_found, clarify"


def test_text_form_resolves_words_through_the_closure() -> None:
    plan = parse_text("有没有 project contract YES_NO on_empty Ask verify Evidence_BACKED")
    assert plan.query_type is QueryType.EXISTENCE
    assert plan.answer_contract is AnswerContract.YES_NO_WITH_EVIDENCE
    assert plan.clarify_on_empty is True
