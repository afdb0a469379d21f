"""The operator capability table: what each filter operator takes and applies to.

One row per operator: the shape of its value (one value, a list, a low/high
pair, a flag), the field types it can apply to, and what it selects on a
many-valued fact field (entities holding a matching value, or entities lacking
one). Everything that asks "may this operator be used here, and with what"
reads it: the catalog loader (`OPERATORS_BY_TYPE`: a field may declare only
operators its type allows), the normalizer's value checks
(`dsl.normalize.values`), the binder's fact semantics (`dsl.bound`), the JSON
Schema's description of a filter value (`dsl.plan.schema`) and the planner prompt's
operator legend (`qdsl.planner.prompt`). Field types are named by value, so
this module imports nothing of the catalog (which imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from qdsl.dsl.ir import Operator


class Arity(StrEnum):
    """The shape of an operator's value."""

    ONE = "one"  # a single value
    LIST = "list"  # a non-empty list of values
    PAIR = "pair"  # low and high, in order
    FLAG = "flag"  # true (is null) or false (is not null)


# the field types (`catalog.FieldType` values)
ALL_TYPES = frozenset({"text", "enum", "number", "date", "datetime", "bool", "id"})
_LISTABLE = ALL_TYPES - {"bool"}
_ORDERED = frozenset({"number", "date", "datetime"})
_WORDED = frozenset({"text", "enum"})


@dataclass(frozen=True)
class OperatorCapability:
    operator: Operator
    arity: Arity
    # the field types it can apply to
    types: frozenset[str]
    # on a many-valued fact field: it selects the entities holding a matching value
    # (and may fall back to text search); otherwise the entities lacking one
    holds_fact: bool


_O, _A = Operator, Arity
CAPABILITIES: Mapping[Operator, OperatorCapability] = {
    c.operator: c
    for c in (
        OperatorCapability(_O.EQUALS, _A.ONE, ALL_TYPES, holds_fact=True),
        OperatorCapability(_O.NOT_EQUALS, _A.ONE, ALL_TYPES, holds_fact=False),
        OperatorCapability(_O.IN, _A.LIST, _LISTABLE, holds_fact=True),
        OperatorCapability(_O.NOT_IN, _A.LIST, _LISTABLE, holds_fact=False),
        OperatorCapability(_O.EQUALS_OR_ALIAS, _A.ONE, _WORDED, holds_fact=True),
        OperatorCapability(_O.CONTAINS, _A.ONE, frozenset({"text"}), holds_fact=True),
        OperatorCapability(_O.GT, _A.ONE, _ORDERED, holds_fact=False),
        OperatorCapability(_O.GTE, _A.ONE, _ORDERED, holds_fact=False),
        OperatorCapability(_O.LT, _A.ONE, _ORDERED, holds_fact=False),
        OperatorCapability(_O.LTE, _A.ONE, _ORDERED, holds_fact=False),
        OperatorCapability(_O.BETWEEN, _A.PAIR, _ORDERED, holds_fact=False),
        OperatorCapability(_O.IS_NULL, _A.FLAG, ALL_TYPES, holds_fact=False),
    )
}


def capability(op: Operator) -> OperatorCapability:
    return CAPABILITIES[op]


def operators_for(field_type: str) -> frozenset[Operator]:
    """Every operator that can apply to a field of this type."""
    return frozenset(op for op, c in CAPABILITIES.items() if field_type in c.types)


def with_arity(arity: Arity) -> tuple[Operator, ...]:
    """The operators taking this shape of value, in the enum's order."""
    return tuple(op for op in Operator if CAPABILITIES[op].arity is arity)


HOLDS_FACT: frozenset[Operator] = frozenset(op for op, c in CAPABILITIES.items() if c.holds_fact)

_SHAPES = {
    Arity.ONE: "One scalar for {ops}",
    Arity.LIST: "a non-empty list for {ops}",
    Arity.PAIR: "[low, high] for {ops}",
    Arity.FLAG: "true (is null) or false (is not null) for {ops}",
}


def value_shapes() -> str:
    """What a filter's value is under each operator, in one sentence."""
    parts = []
    for arity, text in _SHAPES.items():
        ops = with_arity(arity)
        sep = " / " if arity is Arity.LIST else ", "
        parts.append(text.format(ops=sep.join(op.value for op in ops)))
    return "; ".join(parts) + "."
