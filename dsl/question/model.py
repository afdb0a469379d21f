"""What a reading of a question holds: its pieces, its conditions, what is left over.

A `Piece` is one span of the normalized question with what it stands for. The
reader turns pieces into `Condition`s, a target entity, a query type, sort and
limit; whatever content it cannot place is a `Problem` (a residual word, an
ambiguous value, a number without a field). A reading with problems must not
be answered as if the question had been understood.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Literal

from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import Operator, QueryType, SortDirection, Value
from qdsl.dsl.linking import LinkedValue

Language = Literal["zh", "en"]


class Kind(StrEnum):
    CUE = "cue"  # query-type cue
    ENTITY = "entity"
    FIELD = "field"
    VALUE = "value"
    LINKED = "linked_value"
    ID = "id"
    NUMBER = "number"
    DATE = "date"
    COMPARISON = "comparison"
    NEGATION = "negation"
    ABSENCE = "absence"
    PRESENCE = "presence"
    SORT = "sort"
    LIMIT = "limit"
    LABEL_CUE = "label_cue"
    PRONOUN = "pronoun"
    FUNCTION = "function"
    # total, 平均, each, 按 … as a grouping; a declared measure's words (its sense)
    AGGREGATE = "aggregate"
    RESIDUAL = "residual"


@dataclass(frozen=True)
class Sense:
    """One thing a spelling of the catalog can mean."""

    kind: Kind
    entity: str | None = None
    field: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Piece:
    """One span of the normalized question and what it stands for."""

    start: int
    end: int
    text: str
    kind: Kind
    senses: tuple[Sense, ...] = ()
    number: float | None = None
    # Dates: [start, end) at the stated granularity; None is open.
    since: datetime | None = None
    until: datetime | None = None
    # A window ending now ("最近 7 天"): `until` is now (dates.DateRange.ends_now).
    ends_now: bool = False
    # comparison: gt/gte/lt/lte/between/eq; sort: asc/desc; cue: the query type;
    # aggregate: what it asks for (words.AGGREGATES)
    op: str | None = None
    query_type: QueryType | None = None
    linked: tuple[LinkedValue, ...] = ()
    entity: str | None = None  # ids: whose id

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Condition:
    """One condition the question states, as a plan filter would carry it."""

    field: str
    operator: Operator
    value: Value
    text: str  # the words of the question it stands for
    # True: matched as text (a label / text search), not as a field's value.
    textual: bool = False


# unsupported: the question asks for what no plan can state yet (a sum, a breakdown).
ProblemReason = Literal["residual", "ambiguous", "unplaced", "not_allowed", "unsupported"]


@dataclass(frozen=True)
class Problem:
    """Content of the question no plan built from this reading would carry."""

    text: str
    reason: ProblemReason
    # Fields that could carry it, as "field (value, value, ...)".
    could: tuple[str, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Reading:
    question: str
    text: str  # normalize_text(question): every piece indexes it
    language: Language
    now: datetime
    pieces: tuple[Piece, ...]
    query_type: QueryType | None
    entity: str | None
    # The entity was named by the question (not a catalog default).
    entity_named: bool = False
    ids: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    sort: tuple[tuple[str, SortDirection], ...] = ()
    limit: int | None = None
    projection: tuple[str, ...] = ()
    # What a count is broken down by: (field, grain or None), at most two.
    group_by: tuple[tuple[str, Grain | None], ...] = ()
    # The question points at an object of the conversation (它, this project).
    pronoun: bool = False
    # Unknown words searched as text (explain topics, text fallback).
    text_terms: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    # An aggregate's measure: the function asked (sum, avg, min, max, count_distinct)
    # over the one field of `projection`, or the declared measure named.
    function: str | None = None
    measure: str | None = None

    @property
    def understood(self) -> bool:
        return not self.problems and self.query_type is not None and self.entity is not None

    def of_kind(self, kind: Kind) -> tuple[Piece, ...]:
        return tuple(p for p in self.pieces if p.kind is kind)
