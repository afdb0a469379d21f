"""Filter conditions as SQLAlchemy Core, every value a named bound parameter.

Column fields become column predicates (text compared as `lower(col)`, since
filter values arrive casefolded); fact fields become EXISTS over
`semantic_facts` by predicate and `value_norm`, with freshness when the plan
requires fresh facts. Each facts row touched is tenant-bound here too.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.expression import TableClause

from qdsl.dsl.bound import BoundFilter
from qdsl.dsl.catalog import FieldType
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.ir import Operator
from qdsl.executor import column_types as CT
from qdsl.executor import names as N
from qdsl.executor.bind import LIKE_ESCAPE, filter_param
from qdsl.executor.tables import EntityTable
from qdsl.facts.storage import Stored


class Params:
    """One BindParameter object per name within a statement under construction."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._made: dict[str, BindParameter[object]] = {}

    def __call__(
        self, name: str, *, expanding: bool = False, type_: object = None
    ) -> BindParameter[object]:
        found = self._made.get(name)
        if found is None:
            found = sa.bindparam(name, expanding=expanding, type_=type_)  # type: ignore[arg-type]
            self._made[name] = found
        return found


def contains(
    expr: ColumnElement[Any], term: BindParameter[object], dialect: str, *, ilike: bool = False
) -> ColumnElement[bool]:
    """Substring test. SQLite: instr() (LIKE patterns are capped at 50 KB there);
    PostgreSQL: LIKE/ILIKE on an escaped pattern, which trigram indexes serve."""
    if dialect == "sqlite":
        return sa.func.instr(expr, term) > 0
    if ilike:
        return expr.ilike(term, escape=LIKE_ESCAPE)
    return expr.like(term, escape=LIKE_ESCAPE)


def _not_covered(bf: BoundFilter) -> NotCoveredError:
    return NotCoveredError(
        "operator_not_covered",
        f"operator `{bf.op.value}` on `{bf.filter.field}` has no compiled form",
        hint="use another operator for this field",
    )


def _instant(expr: ColumnElement[Any], dialect: str) -> ColumnElement[Any]:
    # SQLite has no timestamp type: rows written by different tools spell the same
    # instant differently ('... 11:00:00.000000' / '... 11:00:00+00:00'), and text
    # comparison then misorders equal instants. julianday() compares instants.
    return sa.func.julianday(expr) if dialect == "sqlite" else expr


# The ordered comparisons, one Python operator each (columns overload them).
COMPARISONS: dict[Operator, Callable[[Any, Any], Any]] = {
    Operator.GT: operator.gt,
    Operator.GTE: operator.ge,
    Operator.LT: operator.lt,
    Operator.LTE: operator.le,
}


def column_condition(bf: BoundFilter, et: EntityTable, p: Params) -> ColumnElement[bool]:
    """A column filter, compared as its field type on its column's storage
    (`executor.column_types`: days for dates, instants for datetimes, lower() text)."""
    assert bf.column is not None
    col = et.col(bf.column)
    name = filter_param(bf)
    op = bf.op
    ctype = col.type
    stored = et.stored.get(bf.column)
    lhs = CT.compared(col, bf.kind, stored, p.dialect)

    def v(param: str) -> ColumnElement[Any]:
        return CT.value_side(p(param, type_=ctype), bf.kind, p.dialect)

    def values() -> BindParameter[object]:
        return p(name, expanding=True, type_=CT.list_type(bf.kind, stored, p.dialect))

    if op is Operator.IS_NULL:
        return col.is_(None) if bf.filter.value is not False else col.is_not(None)
    if op is Operator.EQUALS:
        return lhs == v(name)
    if op in (Operator.NOT_EQUALS, Operator.NOT_IN) and CT.excludes_as_text(bf.kind, stored):
        return _excluded_ids(bf, col, stored, p)
    if op is Operator.NOT_EQUALS:
        # SQL's three-valued logic would drop NULL rows; "not equal to x" keeps them.
        return sa.or_(lhs != v(name), col.is_(None))
    if op in (Operator.IN, Operator.EQUALS_OR_ALIAS):
        return lhs.in_(values())
    if op is Operator.NOT_IN:
        return sa.or_(lhs.not_in(values()), col.is_(None))
    if op is Operator.CONTAINS:
        text = CT.compared(col, FieldType.TEXT, stored, p.dialect)
        return contains(text, p(name, type_=sa.Text()), p.dialect)
    if op in COMPARISONS:
        return COMPARISONS[op](lhs, v(name))  # type: ignore[no-any-return]
    if op is Operator.BETWEEN:
        return lhs.between(v(N.filter_low(bf.index)), v(N.filter_high(bf.index)))
    raise _not_covered(bf)


def _excluded_ids(
    bf: BoundFilter, col: ColumnElement[Any], stored: Stored | None, p: Params
) -> ColumnElement[bool]:
    """`!=` / `not in` on an INTEGER or UUID id, compared as text: a value the column
    cannot hold ("E-4") excludes no row, where bound in the column's type it would
    be NULL and exclude them all."""
    text = CT.as_text(col, stored)
    name = filter_param(bf)
    if bf.op is Operator.NOT_EQUALS:
        found = text != p(name, type_=CT.IdText(stored))
    else:
        found = text.not_in(p(name, expanding=True, type_=CT.IdText(stored)))
    return sa.or_(found, col.is_(None))


def freshness(facts: TableClause, p: Params, *, window: bool) -> list[ColumnElement[bool]]:
    """valid_until in the future (or open) and, with a window, observed recently enough."""
    conds: list[ColumnElement[bool]] = [
        sa.or_(
            facts.c.valid_until.is_(None),
            _instant(facts.c.valid_until, p.dialect)
            > _instant(p(N.NOW, type_=facts.c.valid_until.type), p.dialect),
        )
    ]
    if window:
        since = p(N.FRESH_SINCE, type_=facts.c.observed_at.type)
        conds.append(_instant(facts.c.observed_at, p.dialect) >= _instant(since, p.dialect))
    return conds


def fact_value_condition(
    bf: BoundFilter, facts: TableClause, p: Params
) -> list[ColumnElement[bool]]:
    """Conditions on one facts row: the filter's predicate and, if any, its value."""
    name = filter_param(bf)
    conds: list[ColumnElement[bool]] = [
        facts.c.predicate == p(N.filter_predicate(bf.index), type_=sa.Text())
    ]
    op = bf.op
    if op in (
        Operator.EQUALS,
        Operator.EQUALS_OR_ALIAS,
        Operator.IN,
        Operator.NOT_EQUALS,
        Operator.NOT_IN,
    ):
        if bf.kind is FieldType.NUMBER and op in (Operator.EQUALS, Operator.NOT_EQUALS):
            conds.append(facts.c.value_num == p(name, type_=sa.Float()))
        else:
            conds.append(facts.c.value_norm.in_(p(name, expanding=True, type_=sa.Text())))
    elif op is Operator.CONTAINS:
        conds.append(contains(facts.c.value_norm, p(name, type_=sa.Text()), p.dialect))
    elif op in COMPARISONS and bf.kind is FieldType.NUMBER:
        conds.append(COMPARISONS[op](facts.c.value_num, p(name, type_=sa.Float())))
    elif op is Operator.BETWEEN and bf.kind is FieldType.NUMBER:
        conds.append(
            facts.c.value_num.between(
                p(N.filter_low(bf.index), type_=sa.Float()),
                p(N.filter_high(bf.index), type_=sa.Float()),
            )
        )
    elif op is not Operator.IS_NULL:
        raise _not_covered(bf)
    return conds


def fact_condition(
    bf: BoundFilter,
    et: EntityTable,
    facts: TableClause,
    p: Params,
    *,
    fresh: bool,
    window: bool,
) -> ColumnElement[bool]:
    """EXISTS (or NOT EXISTS) a tenant-bound fact of this entity matching the filter."""
    alias = facts.alias(f"sf{bf.index}")
    conds = [
        alias.c.tenant_id == p(N.TENANT, type_=sa.Text()),
        alias.c.entity_type == p(N.ENTITY_TYPE, type_=sa.Text()),
        alias.c.entity_id == et.row_id,
        *fact_value_condition(bf, alias, p),  # type: ignore[arg-type]
    ]
    if fresh:
        conds.extend(freshness(alias, p, window=window))  # type: ignore[arg-type]
    found = sa.exists(sa.select(alias.c.id).where(*conds))
    if bf.positive_fact:
        return found
    if bf.op is Operator.IS_NULL and bf.filter.value is False:
        return found
    return ~found


def is_text(et: EntityTable, column: str) -> bool:
    """Whether the column sorts as text (the "C" collation on PostgreSQL)."""
    return et.collatable(column)
