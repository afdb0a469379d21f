"""The catalog's vocabulary: field types, aggregations, operators, the error.

Grains are `qdsl.dsl.grain` (a plan names them too).

Shared by every stage of the catalog package (specs, checks, loading) and by
their readers elsewhere; it depends on nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict

from qdsl.dsl.errors import ErrorType, QdslError

# (the IR names the functions a plan may apply: `Aggregation` lives there)
from qdsl.dsl.ir import Aggregation, Operator
from qdsl.dsl.operators import operators_for
from qdsl.dsl.textnorm import normalize_text


class CatalogError(QdslError):
    """The catalog file itself is wrong: a deployment problem, not a plan problem."""

    type = ErrorType.USAGE


class FieldType(StrEnum):
    TEXT = "text"
    ENUM = "enum"
    NUMBER = "number"
    DATE = "date"
    DATETIME = "datetime"
    BOOL = "bool"
    ID = "id"


# What a field's `aggregations` may list: `count` counts rows, not a field's values.
FIELD_AGGREGATIONS = frozenset(Aggregation) - {Aggregation.COUNT}
# Functions of a number; count_distinct applies to any column.
NUMERIC_AGGREGATIONS = frozenset(
    {Aggregation.SUM, Aggregation.AVG, Aggregation.MIN, Aggregation.MAX}
)


class Cardinality(StrEnum):
    MANY_TO_ONE = "many_to_one"
    ONE_TO_MANY = "one_to_many"


TIME_TYPES = frozenset({FieldType.DATE, FieldType.DATETIME})

# Which operators make sense for which field type (`dsl.operators`, the capability
# table); the loader refuses the rest.
OPERATORS_BY_TYPE: dict[FieldType, frozenset[Operator]] = {
    t: operators_for(t.value) for t in FieldType
}

# Operators on the id and the label when the catalog does not declare them as fields.
ID_OPERATORS = (Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN)
LABEL_OPERATORS = (Operator.EQUALS, Operator.CONTAINS, Operator.IN)

EVIDENCE_PROJECTION = "matched_evidence"
"""A virtual projection every entity accepts: the evidence rows of each match."""


AliasGroup = tuple[str, frozenset[str]]


def alias_index(aliases: Mapping[str, Sequence[str]]) -> dict[str, AliasGroup]:
    """Normalized spelling -> (canonical key, every normalized spelling of it).

    The one place alias groups are expanded: the normalizer's values, the
    executor's `value_norm IN (...)` sets and the facts loader all match
    through the same `normalize_text`, or a lookup silently misses.
    """
    index: dict[str, AliasGroup] = {}
    for canon, spellings in aliases.items():
        group = frozenset({normalize_text(canon), *(normalize_text(s) for s in spellings)})
        for norm in group:
            index.setdefault(norm, (canon, group))
    return index


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy without the original's cached properties: they describe the
        original's content (its fingerprint, alias maps), and pydantic would
        otherwise carry them over to a copy whose content `update` changed."""
        copied = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            copied.__dict__.pop(name, None)
        return copied


def _cached_names(cls: type) -> tuple[str, ...]:
    names = _CACHED_NAMES.get(cls)
    if names is None:
        names = _CACHED_NAMES[cls] = tuple(
            name
            for klass in cls.__mro__
            for name, attr in vars(klass).items()
            if isinstance(attr, cached_property)
        )
    return names


_CACHED_NAMES: dict[type, tuple[str, ...]] = {}
