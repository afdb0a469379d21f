"""The typed, immutable IR of a Query DSL Plan (docs/plan-language.md).

Both the text form and the JSON form land here. Models are frozen and forbid
unknown keys, so a plan can be hashed, cached and compared, and nothing the
grammar does not know can ride along. The normalizer returns the same models
with every name bound to the catalog and every default filled in.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The query taxonomy lives with its records; these names are part of the IR.
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds import AnswerContract, QueryType, VerifierCheck

__all__ = [
    "LIST_OPERATORS",
    "Aggregation",
    "AnswerContract",
    "EmptyPolicy",
    "Filter",
    "Grain",
    "Grouping",
    "Measure",
    "ObjectRef",
    "Operator",
    "Plan",
    "QueryType",
    "RetrievalPolicy",
    "Scalar",
    "Scope",
    "Sort",
    "SortDirection",
    "Span",
    "Value",
    "ValueSource",
    "VerifierCheck",
]


class Operator(StrEnum):
    EQUALS = "equals"
    NOT_EQUALS = "not_equals"
    IN = "in"
    NOT_IN = "not_in"
    EQUALS_OR_ALIAS = "equals_or_alias"
    CONTAINS = "contains"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    BETWEEN = "between"
    IS_NULL = "is_null"


LIST_OPERATORS = frozenset({Operator.IN, Operator.NOT_IN})


class Aggregation(StrEnum):
    """The functions a measure applies (SPEC §3, "Beyond the eight types"); the
    catalog lists the ones each field allows (`qdsl.dsl.catalog.types`)."""

    COUNT = "count"
    COUNT_DISTINCT = "count_distinct"
    SUM = "sum"
    AVG = "avg"
    MIN = "min"
    MAX = "max"


class ValueSource(StrEnum):
    USER_TEXT = "user_text"
    CONTEXT = "context"
    REFERENCED_OBJECT = "referenced_object"
    DEFAULT = "default"


class SortDirection(StrEnum):
    ASC = "asc"
    DESC = "desc"


class EmptyPolicy(StrEnum):
    """What an empty result turns into (text form: ``on_empty``)."""

    ANSWER_NOT_FOUND = "answer_not_found"
    CLARIFY = "clarify"


class Span(BaseModel):
    """Where a node was written in plan text (1-based line and column).

    Spans are provenance, not meaning: two plans that say the same thing are
    equal wherever they were written, so every span compares equal to every
    other span and to ``None`` in equality of the nodes that hold them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int
    column: int
    end_line: int
    end_column: int
    start_pos: int
    end_pos: int

    def __eq__(self, other: object) -> bool:
        return other is None or isinstance(other, Span)

    def __hash__(self) -> int:
        return 0


Scalar = str | int | float | bool
Value = Scalar | tuple[Scalar, ...] | None

SpanField = Annotated[Span | None, Field(default=None, exclude=True, repr=False)]


class _Node(BaseModel):
    # Copies with changes are pydantic's `model_copy(update=...)`: frozen like the
    # original, and unvalidated, so the normalizer passes only values it built.
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


class Filter(_Node):
    field: str = Field(min_length=1)
    operator: Operator
    # Scalar for comparisons; a tuple for in / not_in (any length >= 1) and
    # between (exactly two); a bool for is_null (True: is null, False: is not null).
    value: Value = None
    value_source: ValueSource = ValueSource.USER_TEXT
    span: SpanField = None


class ObjectRef(_Node):
    entity_type: str = Field(min_length=1)
    id: str = Field(min_length=1)
    span: SpanField = None


class Scope(_Node):
    tenant_id: str | None = None
    # The project the plan is scoped to: what it names is the catalog's `[scope]`
    # (docs/catalog.md); the executor keeps the rows of that scope only.
    project_id: str | None = Field(
        default=None,
        description=(
            "Scope the plan to one project (an id of the catalog's [scope] entity); "
            "omit it unless the plan itself must be narrowed: the caller's project is applied"
        ),
    )
    referenced_objects: tuple[ObjectRef, ...] = ()
    # Always true: a plan cannot ask to leave its tenant. JSON `false` is refused.
    tenant_bound: Literal[True] = True


# A breakdown groups by at most this many keys.
MAX_GROUPINGS = 2


class Grouping(_Node):
    """One key of a breakdown: a field's value, or the calendar period (grain) it falls in."""

    field: str = Field(min_length=1)
    grain: Grain | None = None
    span: SpanField = None


class Sort(_Node):
    field: str = Field(min_length=1)
    direction: SortDirection = SortDirection.ASC
    span: SpanField = None


class RetrievalPolicy(_Node):
    facts_first: bool = True
    allow_fallback_text: bool = False
    require_fresh_fact: bool = False
    # Facts observed longer ago than this (or past their valid_until) are stale.
    freshness_days: int | None = Field(default=None, ge=1, le=36500)


def _unset(value: Any) -> bool:
    return value is None


class Measure(_Node):
    """What an aggregate computes: `function` over `field` (`count` without a field
    counts rows), or the `name` of a measure the catalog declares, whose function
    (or ratio) the catalog states and the plan cannot override."""

    # (the JSON form leaves out what is unset: `{"name": "loss_ratio"}`)
    function: Aggregation | None = Field(default=None, exclude_if=_unset)
    field: str | None = Field(default=None, min_length=1, exclude_if=_unset)
    name: str | None = Field(default=None, min_length=1, exclude_if=_unset)
    span: SpanField = None

    @model_validator(mode="after")
    def _one_form(self) -> Measure:
        if self.name is not None:
            if self.function is not None or self.field is not None:
                raise ValueError("a declared measure is named alone: `name`, or `function`")
        elif self.function is None:
            raise ValueError("a measure is a `function` (over a `field`) or a declared `name`")
        return self


class Plan(_Node):
    plan_version: Literal["v1"] = "v1"
    query_type: QueryType
    entity_type: str = Field(min_length=1)
    answer_contract: AnswerContract | None = None
    filters: tuple[Filter, ...] = ()
    scope: Scope = Scope()
    projection: tuple[str, ...] = ()
    sort: tuple[Sort, ...] = ()
    group_by: tuple[Grouping, ...] = Field(default=(), max_length=MAX_GROUPINGS)
    limit: int | None = Field(default=None, ge=1)
    retrieval_policy: RetrievalPolicy = RetrievalPolicy()
    verifier_checks: tuple[VerifierCheck, ...] = ()
    clarify_on_empty: bool = False
    # the aggregate's measure (`measure avg(amount)`); legacy `select f` reads as sum(f)
    # (left out of the JSON form when unset: plans without one keep their bytes and digest)
    measure: Measure | None = Field(
        default=None,
        exclude_if=_unset,
        description=(
            "aggregate plans: the function over a field ({function, field}; count without a "
            "field counts rows) or a measure the catalog declares ({name})"
        ),
    )
    span: SpanField = None

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form (the field names of docs/plan-language.md), spans left out."""
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """16 hex digits of SHA-256 over the canonical JSON form (sorted keys): the
        plan hash the audit log and the execution record carry."""
        canonical = json.dumps(self.to_json_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
