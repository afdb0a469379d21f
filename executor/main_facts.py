"""The main statement with the baseline guard and the evidence of its fact
filters: joined to the rows on a small page, read by their ids on a large one.

The entity rows (matches, capped at limit+1, with their totals) are a CTE the
one-row baseline subquery is LEFT JOINed to, so the baseline arrives even when
nothing matched and never costs a statement of its own.

The facts that matched each row's positive fact filters (its evidence) come
one of two ways, by the page size the plan asks for (`EVIDENCE_APART_ROWS`):

* joined (a page of up to 100 rows): LEFT JOINed to the CTE, one row per
  (entity, matching fact), in the same round trip;
* apart (a larger page): a second statement bound to the ids of the rows
  kept. Joined, a 10,000-row list made the server scan the matching facts a
  second time, hash the wide entity rows and sort them again (2.96× the plain
  select's time); apart it costs one index scan of the facts behind the rows
  shown (1.9×), and a statement's fixed cost (a round trip and ≈ 0.3 ms of
  client work, 20% of a small tenant's call), which a small page does not
  repay.

Every facts row read is tenant-bound; the rows keep the plan's order (its sort
keys ride along as q_k* columns), then filter position and fact id.
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
# a page larger than this reads its evidence apart, by the ids of its rows
EVIDENCE_APART_ROWS = 100


def evidence_apart(limit: int) -> bool:
    """Whether a page of `limit` rows reads its evidence in a statement of its own."""
    return limit > EVIDENCE_APART_ROWS


def wrap_main(
    b: StatementBuilder,
    main: AnySelect,
    bound: tuple[BoundFilter, ...],
    *,
    guard: bool,
    joined: bool,
) -> AnySelect | None:
    """`main` (built without the baseline) with the baseline guard and, if
    `joined`, the facts matching its positive fact filters; None if it needs
    neither."""
    positive = [bf for bf in bound if bf.positive_fact] if joined else []
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
        of_rows = b.facts.c.entity_id.in_(sa.select(m.c[N.ROW_ID]))
        mf = _matching(b, positive, facts_of=of_rows).subquery("mf")
        cols += [mf.c[c.name].label(f"{FACT_PREFIX}{c.name}") for c in b.facts.c]
        cols.append(mf.c[FILTER_COLUMN])
        source = source.outerjoin(mf, mf.c.entity_id == m.c[N.ROW_ID])
        order += [mf.c[FILTER_COLUMN], mf.c.id]
    return sa.select(*cols).select_from(source).order_by(*order)


def evidence(b: StatementBuilder, bound: tuple[BoundFilter, ...]) -> AnySelect | None:
    """The facts of the entities :ids that match each positive fact filter, each
    row with the filter's position; None if the plan has no positive fact filter.
    Unordered: `group_evidence` orders each entity's few rows itself, which
    spares the server a sort of every row."""
    positive = [bf for bf in bound if bf.positive_fact]
    if not positive:
        return None
    both = _matching(b, positive, facts_of=b.in_ids(b.facts.c.entity_id))
    if isinstance(both, sa.Select):
        return both
    return sa.select(*both.subquery("ev").c)


def _matching(b: StatementBuilder, positive: list[BoundFilter], *, facts_of: Any) -> Any:
    """The tenant's facts matching each filter, of the entities `facts_of` picks."""
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
                facts_of,
                *conds,
            )
        )
    return parts[0] if len(parts) == 1 else sa.union_all(*parts)


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


def group_evidence(rows: Rows) -> dict[Any, list[Sequence[Any]]]:
    """Per entity id its matching facts (the evidence statement's rows), in
    filter order, then fact id."""
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
