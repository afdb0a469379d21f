"""The `aggregate` query kind: one scalar over a number field under the filters.

Its own statements: the aggregate (`SELECT sum(col), count(col), count(*) ...
WHERE <tenant, scope, filters>`) and the rows it was computed from, cited as
evidence up to the plan's limit (the answer states how many there were in all);
its zh/en sentence stating the basis (the filters), and its consistency rule.

Limit of this version: the plan language names the measure's field (`aggregate
<entity> select <field>`) but not yet its function, so the function is `sum`,
and a field whose catalog `aggregations` do not list `sum` is refused with the
fields that do. Other functions, declared (ratio) measures and the breakdown
kind wait for the plan language to carry them (SPEC §3, "Beyond the eight types").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from qdsl.dsl.errors import PlanError
from qdsl.dsl.kinds.hooks import (
    ROW_ID,
    ROW_LABEL,
    ROW_TENANT,
    ConsistencyContext,
    KindRead,
    KindStatements,
    RenderContext,
    RowRef,
    RowsByRole,
    StatementContext,
)
from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape
from qdsl.dsl.suggest import did_you_mean, suggest

if TYPE_CHECKING:
    from qdsl.dsl.catalog import EntitySpec

# The one function this version computes (the plan cannot name another yet).
FUNCTION = "sum"

_VALUE = "aggregate_value"
_VALUES = "aggregate_values"
_ROWS = "aggregate_rows"
_CITED = "aggregate_cited"
_PROBE = "aggregate_probe"


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def measure_of(spec: EntitySpec, projection: tuple[str, ...]) -> str:
    """The one field a plan of this kind sums, or the PlanError saying why not.

    Run by the normalizer (a plan is refused before it reaches the executor) and
    again by the statement builder."""
    # (a kind module is imported by the catalog's own imports: aggregations by value)
    allowed = sorted(
        name for name, f in spec.fields.items() if f.type == "number" and FUNCTION in f.aggregations
    )
    named = list(dict.fromkeys(spec.names.get(n, n) for n in projection))
    what = f"fields of {spec.name} with {FUNCTION}"
    if len(named) != 1:
        raise PlanError(
            "measure_not_named",
            f"an aggregate names one field of {spec.name}, the plan names {len(named)}",
            hint=did_you_mean((), allowed, what),
            details={"path": "projection", "entity": spec.name, "allowed": allowed},
        )
    name = named[0]
    if name not in allowed:
        raise PlanError(
            "aggregation_not_allowed",
            f"{spec.name}.{name} does not allow {FUNCTION}",
            hint=did_you_mean(suggest(name, allowed), allowed, what),
            details={"path": "projection", "entity": spec.name, "field": name, "allowed": allowed},
        )
    return name


def _build(ctx: StatementContext) -> KindStatements:
    sql = ctx.sql
    field = measure_of(ctx.entity, ctx.plan.projection)
    col = ctx.column(field)
    total = (
        sql.select(
            sql.func.sum(col).label(_VALUE),
            sql.func.count(col).label(_VALUES),
            sql.func.count().label(_ROWS),
            # the bound row limit (one past the plan's, to know a list was cut), read
            # back: the statements are cached per shape, the limit is a parameter
            sql.cast(ctx.limit(), sql.Integer).label(_PROBE),
        )
        .select_from(ctx.table)
        .where(*ctx.where())
    )
    # the rows summed (a NULL adds nothing and is not cited), up to the plan's limit
    cited = (
        sql.select(*ctx.row_columns(), col.label(_CITED))
        .select_from(ctx.table)
        .where(*ctx.where(), col.is_not(None))
        .order_by(*ctx.order_by())
        .limit(ctx.limit())
    )

    def read(rows: RowsByRole) -> KindRead:
        found = rows["main"][0]
        values, cap = int(found[_VALUES]), int(found[_PROBE]) - 1
        refs = tuple(
            RowRef(r[ROW_ID], r[ROW_TENANT], r[ROW_LABEL], {field: _number(r[_CITED])})
            for r in rows["rows"][:cap]
        )
        data = {
            "value": _number(found[_VALUE]),
            "measure": field,
            "function": FUNCTION,
            "values": values,
            "rows": [str(r.entity_id) for r in refs],
        }
        return KindRead(data=data, rows=refs, count=values, truncated=len(refs) < values)

    return KindStatements((("main", total), ("rows", cited)), read)


def _basis(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _render(c: RenderContext) -> tuple[str, dict[str, Any], list[str]]:
    read = c.result.data
    field = c.field(read["measure"])
    filters = [
        {"field": f.field, "operator": f.operator.value, "value": _basis(f.value)}
        for f in c.plan.filters
    ]
    data = {
        "value": read["value"],
        "measure": read["measure"],
        "function": read["function"],
        "filters": filters,
        "rows": {"ids": read["rows"], "count": read["values"]},
    }
    if read["value"] is None:
        text = (
            f"没有{c.many}{c.where()}有{field}。"
            if c.zh
            else f"No {c.many}{c.where()} have a {field}."
        )
        return text, data, []
    cites = c.evidence_ids()
    value, n = c.shown(read["value"]), read["values"]
    text = (
        f"{c.many}{c.where()}的{field}合计 {value}（共 {n} 条）。依据：{c.cite(cites)}"
        if c.zh
        else f"Total {field} of {c.many}{c.where()}: {value} (over {n}). Evidence: {c.cite(cites)}"
    )
    return text, data, cites


def _agrees(c: ConsistencyContext) -> Iterator[str]:
    read = c.result.data
    if c.data.get("value") != read.get("value"):
        yield f"data.value is {c.data.get('value')!r}, the execution read {read.get('value')!r}"
    if c.data.get("function") != read.get("function"):
        yield f"data.function is {c.data.get('function')!r}, the execution ran {FUNCTION!r}"
    if c.data.get("measure") != read.get("measure"):
        measure = read.get("measure")
        yield f"data.measure is {c.data.get('measure')!r}, the execution read {measure!r}"
    cited = {r.entity_id for r in c.result.rows}
    for eid in (c.data.get("rows") or {}).get("ids") or []:
        if str(eid) not in cited:
            yield f"the answer cites {eid} as summed, not in this result"


KIND = QueryKind(
    QueryType.AGGREGATE,
    AnswerContract.AGGREGATE_WITH_BASIS,
    frozenset({"value", "measure", "function", "filters", "rows"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(),
    intent="the sum of one number field whose catalog aggregations allow sum, under the filters",
    spellings=("sum",),
    # The question reader still refuses sum words (dsl/question/measures.py): these
    # cues name the kind, they do not yet make the rule planner answer.
    cues=(r"\bsum of\b", r"总和"),
    cue_rank=4,
    policy=PlannerPolicy(shows_fields=True, measure=True, measure_aggregation=FUNCTION),
    build=_build,
    render=_render,
    consistent=_agrees,
)
