"""The main statement with the evidence of its fact filters, in one round trip.

The entity rows (matches, capped at limit+1, with their totals) are a CTE; the
facts that matched each positive fact filter are LEFT JOINed to them, one row
per (entity, matching fact), so every row's evidence arrives with it instead
of in a second statement. The facts read are tenant-bound and restricted to
the CTE's ids, and the rows keep the plan's order (its sort keys ride along as
q_k* columns), then filter position and fact id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from executor.bind import BoundFilter
from executor.predicates import fact_value_condition, freshness

if TYPE_CHECKING:
    from executor.statements import AnySelect, _Builder

FACT_PREFIX = "f_"
FILTER_COLUMN = "q_filter"


def with_match_facts(
    b: _Builder, main: AnySelect, bound: tuple[BoundFilter, ...]
) -> AnySelect | None:
    """`main` joined with the facts matching its positive fact filters; None if it has none."""
    positive = [bf for bf in bound if bf.positive_fact]
    if not positive:
        return None
    keys = b.order_keys()
    m = main.add_columns(
        *(b.et.col(column).label(f"q_k{i}") for i, (column, _d) in enumerate(keys))
    ).cte("m")
    facts = b.facts
    parts = []
    for bf in positive:
        conds = fact_value_condition(bf, facts, b.p)
        if b.fresh:
            conds.extend(freshness(facts, b.p, window=b.window))
        parts.append(
            sa.select(sa.literal(bf.index, sa.Integer()).label(FILTER_COLUMN), *facts.c).where(
                facts.c.tenant_id == b.p("tenant_id", type_=sa.Text()),
                facts.c.entity_type == b.p("entity_type", type_=sa.Text()),
                facts.c.entity_id.in_(sa.select(m.c.q_id)),
                *conds,
            )
        )
    matched: Any = parts[0] if len(parts) == 1 else sa.union_all(*parts)
    mf = matched.subquery("mf")
    return (
        sa.select(
            *m.c,
            *(mf.c[c.name].label(f"{FACT_PREFIX}{c.name}") for c in facts.c),
            mf.c[FILTER_COLUMN],
        )
        .select_from(m.outerjoin(mf, mf.c.entity_id == m.c.q_id))
        .order_by(*b.order_by(lambda i, _name: m.c[f"q_k{i}"]), mf.c[FILTER_COLUMN], mf.c.id)
    )


def split_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """Entity rows (once each, in order) and, per entity id, its matching facts."""
    entities: dict[str, dict[str, Any]] = {}
    matched: dict[str, list[Any]] = {}
    if not rows:
        return [], matched
    n = len(FACT_PREFIX)
    fact_keys = [(k, k[n:]) for k in rows[0] if k.startswith(FACT_PREFIX)]
    fact_id = f"{FACT_PREFIX}id"
    for r in rows:
        eid = r["q_id"]
        entities.setdefault(eid, r)
        if r[fact_id] is not None:
            matched.setdefault(eid, []).append({short: r[k] for k, short in fact_keys})
    return list(entities.values()), matched
