"""A breakdown whose plan states a measure: a sum, an average, a minimum, a maximum, a
count of distinct values or a declared ratio per group, instead of the rows counted.

The members subquery carries each part's column once; each group's value is the
measure's SQL aggregate over its members (`aggregate_measure.sql_aggregate`, the
same as the scalar aggregate's), so a group's value and the scalar aggregate under
the same filters agree by construction.

The grand total and "other" are aggregates of their own, not sums of groups: an
average of averages, a maximum of the cut groups or a distinct count across groups
is not the shown groups' arithmetic. One `basis` statement computes both over the
members: every row for the total, the rows of no shown group for "other" (the
members left-joined to the shown groups by a marker column, so a NULL key matches
its group with IS NOT DISTINCT FROM and no per-row subquery runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qdsl.dsl.kinds.aggregate_measure import (
    RATIO,
    Computed,
    Part,
    part_value,
    ratio,
    sql_aggregate,
)

MEMBER_PREFIX = "breakdown_measure_"
PRODUCT = "breakdown_product"
_PART = "breakdown_part_"
_TOTAL = "breakdown_total_part_"
_REST = "breakdown_rest_part_"
_ROWS = "breakdown_rows"
_ALL_ROWS = "breakdown_all_rows"
_SHOWN = "breakdown_shown"


def member_column(field: str) -> str:
    return f"{MEMBER_PREFIX}{field}"


def fields_of(measure: Computed) -> list[str]:
    """The fields the measure's parts aggregate (a product's two), each once, in order."""
    return list(dict.fromkeys(f for p in measure.parts for f in p.fields))


def factors_of(measure: Computed) -> set[str]:
    """The fields some part of the measure multiplies."""
    return {f for p in measure.parts if p.times is not None for f in p.fields}


def product_member(measure: Computed, column: Callable[[str], Any]) -> list[Any]:
    """A declared product's value of each member (cited with its row), labelled: none
    for another measure."""
    part = measure.product
    return [] if part is None else [part_value(part, column).label(PRODUCT)]


def _over(sql: Any, part: Part, source: Any, only: Any = None) -> Any:
    """The part's aggregate over `source`'s member columns; `only`: a condition a row
    must meet to be aggregated (the others count as no value)."""
    column = part_value(part, lambda f: source.c[member_column(f)])
    if only is None:
        return sql_aggregate(sql, part, column)
    if column is None:
        return sql.func.count(sql.case((only, 1), else_=None))
    return sql_aggregate(sql, part, sql.case((only, column), else_=None))


def group_columns(sql: Any, measure: Computed, members: Any) -> list[Any]:
    """Each group's parts (labelled) and its rows counted."""
    return [
        *(_over(sql, part, members).label(f"{_PART}{j}") for j, part in enumerate(measure.parts)),
        sql.func.count().label(_ROWS),
    ]


def group_order(sql: Any, measure: Computed, members: Any) -> Any:
    """What groups are ranked by: the measure's value, largest first, no value last."""
    parts = [_over(sql, part, members) for part in measure.parts]
    if measure.function == RATIO:
        value = sql.cast(parts[0], sql.Float) / sql.func.nullif(parts[1], 0)
    else:
        value = parts[0]
    return value.desc().nulls_last()


def basis(sql: Any, measure: Computed, members: Any, shown: Any, keys: Sequence[str]) -> Any:
    """The statement of the measure over every member (the total) and over the members
    of no shown group ("other"). `shown`: the shown groups, a subquery of their keys."""
    marked = sql.select(*(shown.c[k] for k in keys), sql.literal(1).label(_SHOWN)).subquery(
        "breakdown_shown_groups"
    )
    joined = members.outerjoin(
        marked,
        sql.and_(*(members.c[k].is_not_distinct_from(marked.c[k]) for k in keys)),
    )
    rest = marked.c[_SHOWN].is_(None)
    return sql.select(
        *(_over(sql, part, members).label(f"{_TOTAL}{j}") for j, part in enumerate(measure.parts)),
        *(
            _over(sql, part, members, rest).label(f"{_REST}{j}")
            for j, part in enumerate(measure.parts)
        ),
        sql.func.count().label(_ALL_ROWS),
    ).select_from(joined)


def number(value: Any) -> float | int | None:
    """A part's value: counts and sums of integers stay whole numbers."""
    if value is None or isinstance(value, int):
        return value
    return float(value)


def value_of(measure: Computed, row: Mapping[str, Any], prefix: str = _PART) -> float | int | None:
    parts = [number(row[f"{prefix}{j}"]) for j in range(len(measure.parts))]
    return ratio(parts[0], parts[1]) if measure.function == RATIO else parts[0]


def group_rows(row: Mapping[str, Any]) -> int:
    return int(row[_ROWS])


def totals(measure: Computed, row: Mapping[str, Any]) -> tuple[Any, Any, int]:
    """(the measure over every member, over the rest, how many rows were members)."""
    return value_of(measure, row, _TOTAL), value_of(measure, row, _REST), int(row[_ALL_ROWS])
