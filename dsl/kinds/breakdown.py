"""The `breakdown` query kind: a count (or a measure, `breakdown_measure`) per group
of one or two keys, top N plus "other".

Its own statements over the rows the plan reads (tenant, scope, filters), each
row's keys computed once in a subquery (a field's value, or the calendar period
a date field falls in, in the catalog's time zone, or the same of a row a
many-to-one relation reaches, or that row itself: `StatementContext.group_key`):

* main: `SELECT keys, count(*), sum(count(*)) OVER (), ... GROUP BY keys ORDER BY
  count DESC, keys LIMIT N+1`: the window totals are computed over every group
  before the limit, so one statement gives the shown groups, the grand total and
  whether any group was cut; "other" is the total less the shown groups.
* members: up to `CITED_PER_GROUP` ids of each shown group (the lowest ids), the
  evidence of its count.

The window totals were measured against a second statement for them (count(*) and
count(DISTINCT key) under the same conditions) with EXPLAIN ANALYZE on PostgreSQL
15, 100k rows, 50k of the tenant's, 40 groups: the grouping with its windows ran
in 28-31 ms, the grouping alone in 22-35 ms plus 33-41 ms for the second
statement; by month in the catalog's zone, 57-66 ms. The members' statement
ranks every matched row (140-177 ms there): the cost of citing each group.

A NULL key is a group of its own. With a measure, each group's value is the
measure over its members and a third statement computes the total and "other"
(`breakdown_measure.basis`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

from qdsl.dsl.errors import PlanError
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds import breakdown_measure as BM
from qdsl.dsl.kinds.aggregate_measure import Computed, computed
from qdsl.dsl.kinds.breakdown_text import render
from qdsl.dsl.kinds.hooks import (
    ROW_ID,
    ROW_LABEL,
    ROW_TENANT,
    ConsistencyContext,
    KindRead,
    KindStatements,
    RowRef,
    RowsByRole,
    StatementContext,
)
from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape
from qdsl.dsl.suggest import did_you_mean, suggest

if TYPE_CHECKING:
    from qdsl.dsl.catalog import EntitySpec
    from qdsl.dsl.ir import Grouping

# How many member ids each group cites as the evidence of its count.
CITED_PER_GROUP = 3

_VALUE = "breakdown_value"
_TOTAL = "breakdown_total"
_GROUPS = "breakdown_groups"
_RANK = "breakdown_rank"
_ORDER = "breakdown_order"
_PROBE = "breakdown_probe"
_GROUPABLE = frozenset({"enum", "text", "bool", "number", "date", "datetime"})


def key_name(i: int) -> str:
    return f"breakdown_key_{i}"


def label_name(i: int) -> str:
    return f"breakdown_label_{i}"


def groupable(spec: EntitySpec) -> list[str]:
    """The fields of `spec` a breakdown may group by: non-sensitive column fields."""
    return sorted(
        name
        for name, f in spec.fields.items()
        if f.type.value in _GROUPABLE
        and not f.is_fact
        and f.column is not None
        and name not in spec.sensitive
        and f.column not in spec.sensitive
    )


def _refuse(subtype: str, message: str, hint: str, **details: Any) -> PlanError:
    return PlanError(subtype, message, hint=hint, details={"path": "group_by", **details})


def check_groupings(
    spec: EntitySpec,
    group_by: Sequence[Grouping],
    *,
    related: Callable[[str], bool] = lambda _field: False,
) -> tuple[Grouping, ...]:
    """The plan's groupings bound to the catalog's field names, or the PlanError saying
    why one cannot be grouped on. Run by the normalizer and again by the builder; a
    grouping `related` says crosses relations is left to their rules
    (`dsl.normalize.related_grouping`)."""
    allowed = groupable(spec)
    what = f"fields of {spec.name} to group by"
    if not group_by:
        raise _refuse(
            "grouping_not_named",
            f"a breakdown of {spec.name} names one or two fields to group by",
            did_you_mean((), allowed, what),
            entity=spec.name,
            allowed=allowed,
        )
    out: list[Grouping] = []
    for g in group_by:
        if related(g.field):
            out.append(g)
            continue
        name = spec.names.get(g.field, g.field)
        f = spec.fields.get(name)
        if f is not None and f.is_fact:
            raise _refuse(
                "grouping_on_fact",
                f"{spec.name}.{name} is a fact field; a breakdown groups by a column",
                did_you_mean(suggest(name, allowed), allowed, what),
                entity=spec.name,
                field=name,
                allowed=allowed,
            )
        if name not in allowed:
            raise _refuse(
                "grouping_not_allowed",
                f"{spec.name} cannot be grouped by `{g.field}`",
                did_you_mean(suggest(name, allowed), allowed, what),
                entity=spec.name,
                field=g.field,
                allowed=allowed,
            )
        assert f is not None
        grains = [x.value for x in f.grains]
        if g.grain is not None and g.grain not in f.grains:
            hint = (
                f"group {name} by one of its grains: {', '.join(grains)}"
                if grains
                else f"the catalog lists no grains for {name}: group by its value"
            )
            raise _refuse(
                "grain_not_allowed",
                f"{spec.name}.{name} cannot be grouped by {g.grain.value}",
                hint,
                entity=spec.name,
                field=name,
                allowed=grains,
            )
        if g.grain is None and f.type.value == "datetime":
            raise _refuse(
                "grain_required",
                f"{spec.name}.{name} is a moment in time: a breakdown groups it by a period",
                f"name one of its grains: {', '.join(grains) or '(the catalog lists none)'}",
                entity=spec.name,
                field=name,
                allowed=grains,
            )
        out.append(g if name == g.field else g.model_copy(update={"field": name}))
    if len({(g.field, g.grain) for g in out}) != len(out):
        raise _refuse(
            "grouping_repeated",
            "a breakdown names the same grouping twice",
            "name each field (or field and grain) once",
            entity=spec.name,
        )
    return tuple(out)


def _build(ctx: StatementContext) -> KindStatements:
    sql = ctx.sql
    groupings = check_groupings(ctx.entity, ctx.plan.group_by, related=ctx.is_related)
    n = len(groupings)
    measure = None if ctx.plan.measure is None else computed(ctx.entity, ctx.plan.measure)
    measured = [] if measure is None else BM.fields_of(measure)
    product = [] if measure is None else BM.product_member(measure, ctx.factor)
    factors = set() if measure is None else BM.factors_of(measure)
    # a grouping by a related object: its label, shown for its key (its id)
    labels = {i: ctx.group_label(g.field) for i, g in enumerate(groupings) if g.grain is None}
    labels = {i: label for i, label in labels.items() if label is not None}
    members = (
        sql.select(
            *(ctx.group_key(g.field, g.grain).label(key_name(i)) for i, g in enumerate(groupings)),
            *(label.label(label_name(i)) for i, label in labels.items()),
            # a product's factors widened where the database could overflow them
            *(
                (ctx.factor(f) if f in factors else ctx.column(f)).label(BM.member_column(f))
                for f in measured
            ),
            *product,
            *ctx.row_columns(),
            ctx.id_column().label(_ORDER),
        )
        .select_from(ctx.table)
        .where(*ctx.where())
        .subquery("breakdown_members")
    )
    keys = [members.c[key_name(i)] for i in range(n)]
    id_order = ctx.key_order(ctx.entity.id, None, members.c[_ORDER])
    key_order = [
        ctx.key_order(g.field, g.grain, keys[i]).asc().nulls_last() for i, g in enumerate(groupings)
    ]
    if measure is None:
        value = sql.func.count()
        values = [value.label(_VALUE), sql.func.sum(value).over().label(_TOTAL)]
        rank = value.desc()
    else:
        values = BM.group_columns(sql, measure, members)
        rank = BM.group_order(sql, measure, members)
    groups = (
        sql.select(
            *keys,
            *(sql.func.min(members.c[label_name(i)]).label(label_name(i)) for i in labels),
            *values,
            sql.func.count().over().label(_GROUPS),
            # the bound cap (one past the plan's limit), read back: the statements are
            # cached per shape, the limit is a parameter
            sql.cast(ctx.limit(), sql.Integer).label(_PROBE),
        )
        .group_by(*keys)
        .order_by(rank, *key_order)
        .limit(ctx.limit())
    )
    top = groups.subquery("breakdown_top")
    ranked = sql.select(
        *keys,
        members.c[ROW_TENANT],
        members.c[ROW_ID],
        members.c[ROW_LABEL],
        *(members.c[BM.member_column(f)] for f in measured),
        *(members.c[c.name] for c in product),
        # the first members in the id's own order: sorting every member by its
        # text would cost most of the statement
        sql.func.row_number().over(partition_by=keys, order_by=id_order.asc()).label(_RANK),
    ).subquery("breakdown_ranked")
    cited = (
        sql.select(
            *(ranked.c[key_name(i)] for i in range(n)),
            *(ranked.c[c] for c in _ROW),
            *(ranked.c[BM.member_column(f)] for f in measured),
            *(ranked.c[c.name] for c in product),
        )
        .select_from(
            ranked.join(
                top,
                sql.and_(
                    *(
                        ranked.c[key_name(i)].is_not_distinct_from(top.c[key_name(i)])
                        for i in range(n)
                    )
                ),
            )
        )
        .where(ranked.c[_RANK] <= CITED_PER_GROUP)
        .order_by(ranked.c[ROW_ID])
    )
    statements: list[tuple[str, Any]] = [("main", groups), ("rows", cited)]
    if measure is not None:
        # the groups shown: the top less the one read past the cap
        shown = groups.limit(ctx.limit() - 1).subquery("breakdown_shown")
        names = [key_name(i) for i in range(n)]
        statements.append(("basis", BM.basis(sql, measure, members, shown, names)))

    read = partial(_read, groupings, measure, measured, tuple(labels))
    return KindStatements(tuple(statements), read)


def _read(
    groupings: tuple[Grouping, ...],
    measure: Computed | None,
    measured: list[str],
    labelled: tuple[int, ...],
    rows: RowsByRole,
) -> KindRead:
    """The groups shown, their members cited, the total and "other"."""

    def key_of(r: Any) -> tuple[Any, ...]:
        return tuple(_key(g, r[key_name(i)]) for i, g in enumerate(groupings))

    found = rows["main"]
    cap = int(found[0][_PROBE]) - 1 if found else 0
    shown = found[:cap]
    many = int(found[0][_GROUPS]) if found else 0
    ids: dict[tuple[Any, ...], list[str]] = {}
    refs: list[tuple[tuple[Any, ...], RowRef]] = []
    for r in rows["rows"]:
        key = key_of(r)
        ids.setdefault(key, []).append(str(r[ROW_ID]))
        values = {f: _cited(r[BM.member_column(f)]) for f in measured}
        if measure is not None and measure.product is not None:
            # under the measure's name: the checks keep measure and field names apart
            values[str(measure.label)] = _cited(r[BM.PRODUCT])
        refs.append((key, RowRef(r[ROW_ID], r[ROW_TENANT], r[ROW_LABEL], values)))
    out: list[dict[str, Any]] = []
    for r in shown:
        key = key_of(r)
        group: dict[str, Any] = {"keys": list(key)}
        if labelled:
            group["labels"] = [r[label_name(i)] if i in labelled else None for i in range(len(key))]
        if measure is None:
            group["value"] = int(r[_VALUE])
        else:
            group["value"] = BM.value_of(measure, r)
            group["rows"] = BM.group_rows(r)
        group["ids"] = ids.get(key, [])
        out.append(group)
    truncated = many > len(out)
    if measure is None:
        total = int(found[0][_TOTAL]) if found else 0
        other: Any = total - sum(g["value"] for g in out)
        counted = total
    else:
        total, other, counted = BM.totals(measure, rows["basis"][0])
        other = other if truncated else None
    shown_keys: set[tuple[Any, ...]] = {tuple(g["keys"]) for g in out}
    # the cut groups' members are not this answer's evidence
    cited_refs = tuple(ref for key, ref in refs if key in shown_keys)
    data: dict[str, Any] = {
        "groups": out,
        "total": total,
        "other": other,
        "truncated": truncated,
        "group_by": [{"field": g.field, "grain": _grain(g)} for g in groupings],
        "groups_in_all": many,
    }
    data |= {
        "measure": None if measure is None else measure.label,
        "function": "count" if measure is None else measure.function,
        "field": None if measure is None else measure.field,
        "rows": counted,
    }
    return KindRead(data=data, rows=cited_refs, count=counted, truncated=truncated)


def _cited(value: Any) -> Any:
    """A cited member's value of the measure's field: a number as a float."""
    if value is None or isinstance(value, bool | str):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


_ROW = (ROW_TENANT, ROW_ID, ROW_LABEL)


def _grain(g: Grouping) -> str | None:
    return None if g.grain is None else g.grain.value


def _day(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])


def period_key(day: date, grain: Grain | None) -> str:
    """A period (by its first day) as its key: 2025-01-06, 2025-W02, 2025-01, 2025-Q1, 2025."""
    if grain is None or grain is Grain.DAY:
        return day.isoformat()
    if grain is Grain.WEEK:
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}"
    if grain is Grain.MONTH:
        return f"{day.year}-{day.month:02d}"
    if grain is Grain.QUARTER:
        return f"{day.year}-Q{(day.month - 1) // 3 + 1}"
    return str(day.year)


def _key(g: Grouping, value: Any) -> Any:
    if value is None:
        return None
    if g.grain is not None or isinstance(value, date):
        return period_key(_day(value), g.grain)
    if isinstance(value, bool | int | str):
        return value
    return float(value)


def _agrees(c: ConsistencyContext) -> Iterator[str]:
    read = c.result.data
    for key in ("total", "other", "truncated", "group_by"):
        if c.data.get(key) != read.get(key):
            yield f"data.{key} is {c.data.get(key)!r}, the execution read {read.get(key)!r}"
    stated = [(tuple(g.get("keys") or ()), g.get("value")) for g in c.data.get("groups") or []]
    ran = [(tuple(g["keys"]), g["value"]) for g in read.get("groups") or []]
    if stated != ran:
        yield f"data.groups state {stated!r}, the execution counted {ran!r}"
    cited = {r.entity_id for r in c.result.rows}
    for g in c.data.get("groups") or []:
        for eid in g.get("ids") or []:
            if str(eid) not in cited:
                yield f"the answer cites {eid} in a group, not in this result"


KIND = QueryKind(
    QueryType.BREAKDOWN,
    AnswerContract.BREAKDOWN_TABLE,
    frozenset(
        {"groups", "total", "other", "truncated", "group_by", "filters", "measure", "function"}
        | {"rows"}
    ),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(),
    intent=(
        "how many rows fall in each group of one or two fields (or a date field's "
        "day/week/month/quarter/year), the largest groups first, under the filters"
    ),
    spellings=("group_count", "count_by", "per_group"),
    # Only words that ask for groups whatever else the question says; "每个", "per" and
    # 按 / "by" group a count where the question reader finds a field after them
    # (dsl/question/measures.py), and mean "every" or a sort elsewhere.
    cues=(
        r"\bbreak(?:s|ing)? ?down\b|\bbroken down\b",
        r"统计|(?<=[\u4e00-\u9fff])数(?:量|目)?(?=$|[？?。！!]|分别|是多少|有多少)",
    ),
    # before a count ("按城市统计有多少员工"), after a sum ("按城市统计工资总和")
    cue_rank=35,
    policy=PlannerPolicy(optional_measure=True),
    build=_build,
    render=render,
    consistent=_agrees,
)
