"""Enum closure: the many ways a word may name one enum member.

Planners (people and LLMs) write ``exists``, ``How many``, ``有没有``, ``==`` or
``not-in``; the IR holds exactly one member for each. Both the text
transformer and the JSON form resolve words here, so the two forms accept the
same spellings. A word that names nothing fails closed with a did-you-mean.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping
from enum import StrEnum
from functools import lru_cache
from typing import TypeVar

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import (
    Aggregation,
    AnswerContract,
    EmptyPolicy,
    Grain,
    Operator,
    QueryType,
    SortDirection,
    ValueSource,
    VerifierCheck,
)
from qdsl.dsl.kinds import spelling_table

E = TypeVar("E", bound=StrEnum)

_SEPARATORS = re.compile(r"[\s\-]+")
_UNDERSCORES = re.compile(r"_+")


def closure_key(word: str) -> str:
    """Case, width and spacing folded away: ``" Not-In "`` -> ``"not_in"``."""
    # The words are few (operators, query types): short ones are remembered.
    return _folded_short(word) if len(word) <= 64 else _folded(word)


def _folded(word: str) -> str:
    folded = unicodedata.normalize("NFKC", word).casefold().strip()
    return _UNDERSCORES.sub("_", _SEPARATORS.sub("_", folded))


_folded_short = lru_cache(maxsize=1024)(_folded)


# Synonyms beyond each member's own value (which always resolves to itself):
# each query kind's record owns its plan spellings (`dsl.kinds`).
QUERY_TYPE_SYNONYMS: dict[str, QueryType] = spelling_table()

ANSWER_CONTRACT_SYNONYMS: dict[str, AnswerContract] = {
    "yes_no": AnswerContract.YES_NO_WITH_EVIDENCE,
    "count": AnswerContract.COUNT_SCALAR,
    "scalar": AnswerContract.COUNT_SCALAR,
    "list": AnswerContract.ENTITY_LIST,
    "snapshot": AnswerContract.ENTITY_SNAPSHOT,
    "explanation": AnswerContract.EXPLANATION_WITH_CITATIONS,
    "diagnosis": AnswerContract.DIAGNOSIS_WITH_EVIDENCE,
    "comparison": AnswerContract.COMPARISON_WITH_BASIS,
    "clarify": AnswerContract.CLARIFY_OR_FAIL,
}

OPERATOR_SYNONYMS: dict[str, Operator] = {
    "=": Operator.EQUALS,
    "==": Operator.EQUALS,
    "eq": Operator.EQUALS,
    "equal": Operator.EQUALS,
    "is": Operator.EQUALS,
    "!=": Operator.NOT_EQUALS,
    "<>": Operator.NOT_EQUALS,
    "ne": Operator.NOT_EQUALS,
    "neq": Operator.NOT_EQUALS,
    "not_equal": Operator.NOT_EQUALS,
    "is_not": Operator.NOT_EQUALS,
    "one_of": Operator.IN,
    "any_of": Operator.IN,
    "none_of": Operator.NOT_IN,
    "~=": Operator.EQUALS_OR_ALIAS,
    "alias": Operator.EQUALS_OR_ALIAS,
    "eq_alias": Operator.EQUALS_OR_ALIAS,
    "equals_alias": Operator.EQUALS_OR_ALIAS,
    "like": Operator.CONTAINS,
    "has": Operator.CONTAINS,
    "includes": Operator.CONTAINS,
    "包含": Operator.CONTAINS,
    ">": Operator.GT,
    "greater_than": Operator.GT,
    ">=": Operator.GTE,
    "ge": Operator.GTE,
    "at_least": Operator.GTE,
    "<": Operator.LT,
    "less_than": Operator.LT,
    "<=": Operator.LTE,
    "le": Operator.LTE,
    "at_most": Operator.LTE,
    "range": Operator.BETWEEN,
    "null": Operator.IS_NULL,
    "isnull": Operator.IS_NULL,
}

# Operator words that mean `is_null` with the value False ("is not null").
NOT_NULL_WORDS = frozenset({"is_not_null", "not_null", "notnull"})

VALUE_SOURCE_SYNONYMS: dict[str, ValueSource] = {
    "user": ValueSource.USER_TEXT,
    "text": ValueSource.USER_TEXT,
    "question": ValueSource.USER_TEXT,
    "ctx": ValueSource.CONTEXT,
    "reference": ValueSource.REFERENCED_OBJECT,
    "referenced": ValueSource.REFERENCED_OBJECT,
    "ref": ValueSource.REFERENCED_OBJECT,
    "defaults": ValueSource.DEFAULT,
}

SORT_DIRECTION_SYNONYMS: dict[str, SortDirection] = {
    "ascending": SortDirection.ASC,
    "up": SortDirection.ASC,
    "descending": SortDirection.DESC,
    "down": SortDirection.DESC,
}

EMPTY_POLICY_SYNONYMS: dict[str, EmptyPolicy] = {
    "not_found": EmptyPolicy.ANSWER_NOT_FOUND,
    "none": EmptyPolicy.ANSWER_NOT_FOUND,
    "ask": EmptyPolicy.CLARIFY,
    "clarify_on_empty": EmptyPolicy.CLARIFY,
}

VERIFIER_CHECK_SYNONYMS: dict[str, VerifierCheck] = {}

AGGREGATION_SYNONYMS: dict[str, Aggregation] = {
    "average": Aggregation.AVG,
    "mean": Aggregation.AVG,
    "total": Aggregation.SUM,
    "minimum": Aggregation.MIN,
    "maximum": Aggregation.MAX,
    "distinct": Aggregation.COUNT_DISTINCT,
    "countdistinct": Aggregation.COUNT_DISTINCT,
}

GRAIN_SYNONYMS: dict[str, Grain] = {
    "daily": Grain.DAY,
    "weekly": Grain.WEEK,
    "monthly": Grain.MONTH,
    "quarterly": Grain.QUARTER,
    "yearly": Grain.YEAR,
    "annual": Grain.YEAR,
}

# Text-form retrieval options: word -> (RetrievalPolicy field, value).
RETRIEVAL_FLAGS: dict[str, tuple[str, bool]] = {
    "facts_first": ("facts_first", True),
    "no_facts_first": ("facts_first", False),
    "facts_last": ("facts_first", False),
    "fallback_text": ("allow_fallback_text", True),
    "allow_fallback_text": ("allow_fallback_text", True),
    "no_fallback_text": ("allow_fallback_text", False),
    "require_fresh_fact": ("require_fresh_fact", True),
    "fresh_facts": ("require_fresh_fact", True),
    "no_require_fresh_fact": ("require_fresh_fact", False),
}
# Options followed by a number: word -> RetrievalPolicy field.
RETRIEVAL_NUMBERS: dict[str, str] = {"freshness_days": "freshness_days"}


def _table(enum: type[E], synonyms: Mapping[str, E]) -> dict[str, E]:
    table = {closure_key(member.value): member for member in enum}
    table.update({closure_key(word): member for word, member in synonyms.items()})
    return table


_TABLES: dict[str, dict[str, StrEnum]] = {
    "query_type": dict(_table(QueryType, QUERY_TYPE_SYNONYMS)),
    "answer_contract": dict(_table(AnswerContract, ANSWER_CONTRACT_SYNONYMS)),
    "operator": dict(_table(Operator, OPERATOR_SYNONYMS)),
    "value_source": dict(_table(ValueSource, VALUE_SOURCE_SYNONYMS)),
    "sort_direction": dict(_table(SortDirection, SORT_DIRECTION_SYNONYMS)),
    "empty_policy": dict(_table(EmptyPolicy, EMPTY_POLICY_SYNONYMS)),
    "verifier_check": dict(_table(VerifierCheck, VERIFIER_CHECK_SYNONYMS)),
    "aggregation": dict(_table(Aggregation, AGGREGATION_SYNONYMS)),
    "grain": dict(_table(Grain, GRAIN_SYNONYMS)),
}


def suggestions(kind: str, word: str, n: int = 3) -> list[str]:
    """Canonical members whose spellings are close to `word`, best first."""
    table = _TABLES[kind]
    out: list[str] = []
    for match in difflib.get_close_matches(closure_key(word), list(table), n=n * 3, cutoff=0.6):
        value = table[match].value
        if value not in out:
            out.append(value)
    return out[:n]


def unknown_word(kind: str, word: str) -> PlanError:
    """The error for a word that names no member of `kind`."""
    allowed = sorted({member.value for member in _TABLES[kind].values()})
    close = suggestions(kind, word)
    label = kind.replace("_", " ")
    if close:
        hint = "did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
    else:
        hint = f"use one of: {', '.join(allowed)}"
    return PlanError(
        f"unknown_{kind}",
        f"unknown {label} {word!r}",
        hint=hint,
        details={"kind": kind, "word": word, "suggestions": close, "allowed": allowed},
    )


def _resolve(kind: str, word: str) -> StrEnum:
    member = _TABLES[kind].get(closure_key(word))
    if member is None:
        raise unknown_word(kind, word)
    return member


def query_type(word: str) -> QueryType:
    return QueryType(_resolve("query_type", word))


def answer_contract(word: str) -> AnswerContract:
    return AnswerContract(_resolve("answer_contract", word))


def operator(word: str) -> Operator:
    return Operator(_resolve("operator", word))


def is_not_null_word(word: str) -> bool:
    return closure_key(word) in NOT_NULL_WORDS


def value_source(word: str) -> ValueSource:
    return ValueSource(_resolve("value_source", word))


def sort_direction(word: str) -> SortDirection:
    return SortDirection(_resolve("sort_direction", word))


def empty_policy(word: str) -> EmptyPolicy:
    return EmptyPolicy(_resolve("empty_policy", word))


def grain(word: str) -> Grain:
    return Grain(_resolve("grain", word))


def verifier_check(word: str) -> VerifierCheck:
    return VerifierCheck(_resolve("verifier_check", word))


def aggregation(word: str) -> Aggregation:
    return Aggregation(_resolve("aggregation", word))


def retrieval_option(word: str, number: int | None) -> tuple[str, bool | int]:
    """A text-form retrieval option (`fallback_text`, `freshness_days 30`) as (field, value)."""
    key = closure_key(word)
    if key in RETRIEVAL_FLAGS and number is None:
        return RETRIEVAL_FLAGS[key]
    if key in RETRIEVAL_NUMBERS and number is not None:
        return RETRIEVAL_NUMBERS[key], number
    allowed = sorted(RETRIEVAL_FLAGS) + [f"{n} N" for n in sorted(RETRIEVAL_NUMBERS)]
    close = difflib.get_close_matches(key, [*RETRIEVAL_FLAGS, *RETRIEVAL_NUMBERS], n=1)
    if close and close[0] != key:
        hint = f'did you mean "{close[0]}"?'
    elif key in RETRIEVAL_NUMBERS:
        hint = f"{key} takes a number of days, e.g. `{key} 30`"
    elif key in RETRIEVAL_FLAGS:
        hint = f"{key} takes no number"
    else:
        hint = "use one of: " + ", ".join(allowed)
    written = word if number is None else f"{word} {number}"
    raise PlanError(
        "unknown_retrieval_option",
        f"unknown retrieval option {written!r}",
        hint=hint,
        details={"word": word, "allowed": allowed},
    )
