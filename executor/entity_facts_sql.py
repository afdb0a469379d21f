"""The statements reading the rows' own facts (status, compare, diagnose,
explain, projected fact fields): `entity_facts`, and `entity_facts_ranked`
for when its row cap did not hold every fact. Every facts row read is
tenant-bound; ids are bound at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement

from qdsl.executor import names as N
from qdsl.executor.predicates import freshness

if TYPE_CHECKING:
    from qdsl.executor.statements import AnySelect, StatementBuilder


def entity_facts(b: StatementBuilder, *, only_projected: bool) -> AnySelect:
    """The (fresh) facts of the rows read (`only_projected`: of the projected fact
    fields' predicates alone), each entity's predicates' values in `value_norm`
    byte order (on both dialects), capped at :facts_cap rows. The flow keeps
    `FACT_VALUES_CAP` distinct values per entity and predicate and counts the rest."""
    f = b.facts
    return (
        _own_facts(b, only_projected=only_projected)
        .order_by(f.c.entity_id, f.c.predicate, _byte_order(b, f.c.value_norm), f.c.id)
        .limit(b.p(N.FACTS_CAP, type_=sa.Integer()))
    )


def entity_facts_ranked(b: StatementBuilder, *, only_projected: bool) -> AnySelect:
    """`entity_facts` bounded per entity and predicate, for when :facts_cap rows
    did not hold every fact: the facts of at most :values_cap distinct values of
    each (so one predicate with very many values cannot crowd out the others),
    each row with its value's dense rank counted from the first value and from
    the last, whose sum less one is how many distinct values its predicate holds
    (PostgreSQL has no DISTINCT count over a window). Three sorts where
    `entity_facts` has one, so it runs only then."""
    f = b.facts
    norm = _byte_order(b, f.c.value_norm)
    group = (f.c.entity_id, f.c.predicate)
    up = sa.func.dense_rank().over(partition_by=group, order_by=norm.asc())
    down = sa.func.dense_rank().over(partition_by=group, order_by=norm.desc())
    ranked = (
        _own_facts(b, only_projected=only_projected)
        .add_columns(up.label(N.FACT_RANK), down.label(N.FACT_RANK_DOWN))
        .subquery("ef")
    )
    return (
        sa.select(*ranked.c)
        .where(ranked.c[N.FACT_RANK] <= b.p(N.VALUES_CAP, type_=sa.Integer()))
        .order_by(ranked.c.entity_id, ranked.c.predicate, ranked.c[N.FACT_RANK], ranked.c.id)
        .limit(b.p(N.FACTS_CAP, type_=sa.Integer()))
    )


def _own_facts(b: StatementBuilder, *, only_projected: bool) -> AnySelect:
    f = b.facts
    own = b.facts_select()
    if only_projected:
        own = own.where(f.c.predicate.in_(b.p(N.FACT_PREDICATES, expanding=True)))
    if b.fresh:
        own = own.where(*freshness(f, b.p, window=b.window))
    return own


def _byte_order(b: StatementBuilder, column: Any) -> ColumnElement[Any]:
    return sa.collate(column, "C") if b.dialect == "postgresql" else column
