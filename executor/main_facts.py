"""The main statement with the baseline guard and the evidence of its fact
filters, in one round trip.

The entity rows (matches, capped at limit+1, with their totals) are a CTE; the
facts that matched each positive fact filter are LEFT JOINed to them, one row
per (entity, matching fact), so every row's evidence arrives with it instead
of in a second statement. The facts read are tenant-bound and restricted to
the CTE's ids, and the rows keep the plan's order (its sort keys ride along as
q_k* columns), then filter position and fact id.
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

FACT_PREFIX = "f_"
FILTER_COLUMN = N.ROW_FILTER


def wrap_main(
    b: StatementBuilder, main: AnySelect, bound: tuple[BoundFilter, ...], *, guard: bool
) -> AnySelect | None:
    """`main` (built without the baseline) with the baseline guard and the facts
    matching its positive fact filters; None if it needs neither.

    The baseline is a one-row subquery the rows are LEFT JOINed to, so it arrives
    even when nothing matched (one row, q_id NULL) and never costs a statement."""
    positive = [bf for bf in bound if bf.positive_fact]
    if not positive and not guard:
        return None
    keys = b.order_keys()
    m = main.add_columns(
        *(b.et.col(column).label(N.sort_column(i)) for i, (column, _d) in enumerate(keys))
    ).cte("m")
    cols: list[Any] = [*m.c]
    source: Any = m
    order: list[Any] = [*b.order_by(lambda i, _name: m.c[N.sort_column(i)])]
    if guard:
        base = b.et.table.alias("base")
        g = (
            sa.select(sa.func.count().label(N.ROW_BASELINE))
            .select_from(base)
            .where(base.c[b.et.spec.tenant] == b.p(N.TENANT, type_=sa.Text()))
            .subquery("g")
        )
        cols.append(g.c[N.ROW_BASELINE])
        source = g.outerjoin(m, sa.true())
    if positive:
        mf = _matching_facts(b, m, positive)
        cols += [mf.c[c.name].label(f"{FACT_PREFIX}{c.name}") for c in b.facts.c]
        cols.append(mf.c[FILTER_COLUMN])
        source = source.outerjoin(mf, mf.c.entity_id == m.c[N.ROW_ID])
        order += [mf.c[FILTER_COLUMN], mf.c.id]
    return sa.select(*cols).select_from(source).order_by(*order)


def _matching_facts(b: StatementBuilder, m: Any, positive: list[BoundFilter]) -> Any:
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
                facts.c.entity_id.in_(sa.select(m.c[N.ROW_ID])),
                *conds,
            )
        )
    matched: Any = parts[0] if len(parts) == 1 else sa.union_all(*parts)
    return matched.subquery("mf")


def split_rows(
    rows: Rows,
) -> tuple[list[Sequence[Any]], dict[Any, list[Sequence[Any]]], int | None]:
    """Entity rows (once each, in order), per entity id its matching facts (the
    rows themselves: their `f_` columns are the fact) and the baseline (None if
    the statement does not carry it)."""
    data = rows.data
    matched: dict[Any, list[Sequence[Any]]] = {}
    if not data:
        return [], matched, None
    layout = rows.layout
    raw = layout.getter(N.ROW_BASELINE)(data[0]) if N.ROW_BASELINE in layout.index else None
    baseline = int(raw) if raw is not None else None
    row_id = layout.getter(N.ROW_ID)
    fact_id = layout.index.get(f"{FACT_PREFIX}id")
    entities: dict[Any, Sequence[Any]] = {}
    for r in data:
        eid = row_id(r)
        if eid is None:  # the baseline's row when nothing matched
            continue
        if eid not in entities:
            entities[eid] = r
        if fact_id is not None and r[fact_id] is not None:
            found = matched.get(eid)
            if found is None:
                matched[eid] = [r]
            else:
                found.append(r)
    return list(entities.values()), matched, baseline
