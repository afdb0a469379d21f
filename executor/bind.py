"""The bound parameters of a bound plan's filters (names match `executor.predicates`).

Binding itself happens once, in the normalizer (`qdsl.dsl.bound`): a filter
arrives here with its catalog spec and its value already typed. What is left is
the dialect's spelling of a substring search and the parameter names, which
depend only on the filter's position, never on its value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdsl.dsl.bound import BoundFilter, BoundPlan, alias_set, as_tuple, text_value
from qdsl.dsl.ir import Operator
from qdsl.executor import names as N

LIKE_ESCAPE = "\\"


def filter_param(bf: BoundFilter) -> str:
    """The name a filter's value binds under."""
    return N.filter_value(bf.index)


def contains_param(term: str, dialect: str) -> str:
    """The bound form of a substring search: `instr` takes the text itself on SQLite
    (whose LIKE refuses patterns over 50 KB); LIKE/ILIKE take an escaped pattern."""
    return term if dialect == "sqlite" else like_pattern(term)


def like_pattern(term: str) -> str:
    """`%term%` with LIKE's wildcards escaped, so a value is always literal text."""
    escaped = (term.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%")).replace(
        "_", LIKE_ESCAPE + "_"
    )
    return f"%{escaped}%"


def filter_params(bf: BoundFilter, dialect: str) -> dict[str, Any]:
    """The bound values of one filter."""
    p = filter_param(bf)
    params: dict[str, Any] = {}
    if bf.fact is not None:
        params[N.filter_predicate(bf.index)] = bf.fact
    if bf.op is Operator.IS_NULL:
        return params
    if bf.op is Operator.BETWEEN:
        params[N.filter_low(bf.index)], params[N.filter_high(bf.index)] = bf.value
    elif bf.op is Operator.CONTAINS:
        params[p] = contains_param(bf.value, dialect)
    else:
        params[p] = bf.value
    return params


def fallback_terms(bf: BoundFilter) -> tuple[str, ...]:
    """The text a fact filter falls back to: its value's spellings, normalized."""
    values = as_tuple(bf.filter.value)
    if bf.op is Operator.CONTAINS:
        return (text_value(values[0]),)
    return tuple(sorted({n for v in values for n in alias_set(bf.field, v) if n}))


def subject_ids(bound: BoundPlan) -> tuple[str, ...]:
    """Ids the plan names as subjects: referenced objects of this entity type."""
    seen: dict[str, None] = {}
    for ref in bound.plan.scope.referenced_objects:
        if ref.entity_type == bound.entity.name:
            seen.setdefault(ref.id, None)
    return tuple(seen)


def id_filter_values(bfs: Sequence[BoundFilter], bound: BoundPlan) -> tuple[str, ...]:
    """Ids named by equals/in filters on the entity's id (compare subjects)."""
    out: dict[str, None] = {}
    for bf in bfs:
        if bf.column == bound.entity.id and bf.op in (Operator.EQUALS, Operator.IN):
            for v in as_tuple(bf.filter.value):
                out.setdefault(str(v), None)
    return tuple(out)
