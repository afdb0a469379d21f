"""The main statement with the baseline guard, and the evidence of its fact
filters read by the ids it returned.

The entity rows (matches, capped at limit+1, with their totals) are a CTE the
one-row baseline subquery is LEFT JOINed to, so the baseline arrives even when
nothing matched and never costs a statement of its own.

The facts that matched each row's positive fact filters (its evidence) are a
second statement, bound to the ids of the rows kept: joined into the main
statement they made the server scan the matching facts a second time, hash
the wide entity rows and sort them again, 3× the plain select's time for a
10,000-row list; read by id they cost one index scan of the facts behind the
rows shown. Every facts row read is tenant-bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from qdsl.dsl.bound import BoundFilter
from qdsl.executor import names as N
from qdsl.executor.predicates import fact_value_condition, freshness

if TYPE_CHECKING:
    from qdsl.executor.rows import Rows
    from qdsl.executor.statements import AnySelect, StatementBuilder

FILTER_COLUMN = N.ROW_FILTER


def wrap_main(b: StatementBuilder, main: AnySelect, *, guard: bool) -> AnySelect | None:
    """`main` (built without the baseline) with the baseline guard; None if the
    plan needs none."""
    if not guard:
        return None
    keys = b.order_keys()
    m = main.add_columns(
        *(b.et.col(column).label(N.sort_column(i)) for i, (column, _d) in enumerate(keys))
    ).cte("m")
    base = b.et.table.alias("base")
    g = (
        sa.select(sa.func.count().label(N.ROW_BASELINE))
        .select_from(base)
        .where(base.c[b.et.spec.tenant] == b.p(N.TENANT, type_=sa.Text()))
        .subquery("g")
    )
    order = b.order_by(lambda i, _name: m.c[N.sort_column(i)])
    return (
        sa.select(*m.c, g.c[N.ROW_BASELINE]).select_from(g.outerjoin(m, sa.true())).order_by(*order)
    )


def evidence(b: StatementBuilder, bound: tuple[BoundFilter, ...]) -> AnySelect | None:
    """The facts of the entities :ids that match each positive fact filter, each
    row with the filter's position; None if the plan has no positive fact filter.
    Unordered: `group_evidence` orders each entity's few rows itself, which
    spares the server a sort of every row."""
    positive = [bf for bf in bound if bf.positive_fact]
    if not positive:
        return None
    facts = b.facts
    parts = []
    for bf in positive:
        conds = fact_value_condition(bf, facts, b.p)
        if b.fresh:
            conds.extend(freshness(facts, b.p, window=b.window))
        parts.append(
            sa.select(sa.literal(bf.index, sa.Integer()).label(FILTER_COLUMN), *facts.c).where(
                facts.c.tenant_id == b.p(N.TENANT, type_=sa.Text()),
                facts.c.entity_type == b.p(N.ENTITY_TYPE, type_=sa.Text()),
                b.in_ids(facts.c.entity_id),
                *conds,
            )
        )
    if len(parts) == 1:
        return parts[0]
    both = sa.union_all(*parts).subquery("ev")
    return sa.select(*both.c)


def split_rows(rows: Rows) -> tuple[Sequence[Sequence[Any]], int | None]:
    """The entity rows of the wrapped main statement and the baseline it carried
    (every row holds it; a lone row without an id when nothing matched)."""
    data = rows.data
    if not data:
        return (), None
    layout = rows.layout
    raw = layout.getter(N.ROW_BASELINE)(data[0])
    baseline = int(raw) if raw is not None else None
    if len(data) == 1 and layout.getter(N.ROW_ID)(data[0]) is None:
        return (), baseline
    return data, baseline


def group_evidence(rows: Rows) -> dict[Any, list[Sequence[Any]]]:
    """Per entity id its matching facts, in filter order, then fact id."""
    layout = rows.layout
    entity_id = layout.getter("entity_id")
    matched: dict[Any, list[Sequence[Any]]] = {}
    for r in rows.data:
        eid = entity_id(r)
        found = matched.get(eid)
        if found is None:
            matched[eid] = [r]
        else:
            found.append(r)
    at_filter, at_id = layout.index[FILTER_COLUMN], layout.index["id"]
    for found in matched.values():
        if len(found) > 1:
            found.sort(key=lambda r: (r[at_filter], r[at_id]))
    return matched
