"""The `aggregate` query kind: one scalar measure under the filters.

The plan's measure (`measure avg(amount)`, `measure count()`, `measure
<declared>`; checked against the catalog by `qdsl.dsl.normalize.measure`) is
computed by its own statements: the aggregate (`SELECT avg(col), count(col),
count(*) ... WHERE <tenant, scope, filters>`; a declared ratio reads its two
parts and divides) and the rows it was computed from, cited as evidence up to
the plan's limit (the answer states how many there were in all); its zh/en
sentence stating the function and the basis (the filters, the count), and its
consistency rule. The breakdown kind (SPEC §3) is not this one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from qdsl.dsl.errors import PlanError
from qdsl.dsl.kinds.aggregate_measure import (
    RATIO,
    Part,
    computed,
    declared_label,
    measure_words,
    part_value,
    ratio,
    sql_aggregate,
)
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

# What the legacy `aggregate <entity> select <field>` computes.
FUNCTION = "sum"

_VALUE = "aggregate_value"
_VALUES = "aggregate_values"
_ROWS = "aggregate_rows"
_CITED = "aggregate_cited"
_PROBE = "aggregate_probe"


def _cited(value: Any) -> Any:
    """A cited row's value: a number as a float, anything else (the values a
    count_distinct counts) as text."""
    if value is None or isinstance(value, bool | str):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def measure_of(spec: EntitySpec, projection: tuple[str, ...]) -> str:
    """The one field a legacy plan of this kind (`select <field>`, no measure) sums,
    or the PlanError saying why not (run by the normalizer)."""
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
    plan = ctx.plan
    assert plan.measure is not None  # the normalizer states every aggregate's measure
    measure = computed(ctx.entity, plan.measure)
    product = measure.product
    # what a cited row carries: the field, or a declared product's value of the row
    col = None if measure.field is None else ctx.column(measure.field)
    if product is not None:
        col = part_value(product, ctx.factor)
    values = [
        sql_aggregate(sql, part, part_value(part, _reader(ctx, part))).label(_label(i))
        for i, part in enumerate(measure.parts)
    ]
    total = (
        sql.select(
            *values,
            (sql.func.count() if col is None else sql.func.count(col)).label(_VALUES),
            sql.func.count().label(_ROWS),
            # the bound row limit (one past the plan's, to know a list was cut), read
            # back: the statements are cached per shape, the limit is a parameter
            sql.cast(ctx.limit(), sql.Integer).label(_PROBE),
        )
        .select_from(ctx.table)
        .where(*ctx.where())
    )
    # the rows the value was computed from (a NULL is no value and is not cited),
    # up to the plan's limit
    present = () if col is None else (col.is_not(None),)
    # a product's row shows its two factors too, so the value can be checked by hand
    factors = () if product is None else product.fields
    shown = () if col is None else (col.label(_CITED), *(_factor(ctx, f) for f in factors))
    cited = (
        sql.select(*ctx.row_columns(), *shown)
        .select_from(ctx.table)
        .where(*ctx.where(), *present)
        .order_by(*ctx.order_by())
        .limit(ctx.limit())
    )

    def read(rows: RowsByRole) -> KindRead:
        found = rows["main"][0]
        n, cap = int(found[_VALUES]), int(found[_PROBE]) - 1
        field = measure.field

        def carried(r: Any) -> dict[str, Any]:
            if product is not None:
                # the product under the measure's name (never a field's: the checks
                # keep measure and field names apart), each factor under its field
                return {
                    **{f: _cited(r[_factor_label(f)]) for f in factors},
                    str(measure.label): _cited(r[_CITED]),
                }
            return {} if field is None else {field: _cited(r[_CITED])}

        refs = tuple(
            RowRef(r[ROW_ID], r[ROW_TENANT], r[ROW_LABEL], carried(r)) for r in rows["rows"][:cap]
        )
        parts = [_scalar(found[_label(i)]) for i in range(len(measure.parts))]
        value = ratio(parts[0], parts[1]) if measure.function == RATIO else parts[0]
        data: dict[str, Any] = {
            "value": value,
            "measure": measure.label,
            "function": measure.function,
            "field": field,
            "values": n,
            "rows": [str(r.entity_id) for r in refs],
        }
        if measure.function == RATIO:
            data["parts"] = parts
        return KindRead(data=data, rows=refs, count=n, truncated=len(refs) < n)

    return KindStatements((("main", total), ("rows", cited)), read)


def _reader(ctx: StatementContext, part: Part) -> Callable[[str], Any]:
    """How the part reads its fields: a product's factors widened (`ctx.factor`)."""
    return ctx.column if part.times is None else ctx.factor


def _factor_label(field: str) -> str:
    return f"{_CITED}_{field}"


def _factor(ctx: StatementContext, field: str) -> Any:
    return ctx.column(field).label(_factor_label(field))


def _label(i: int) -> str:
    return _VALUE if i == 0 else f"{_VALUE}_{i}"


def _scalar(value: Any) -> float | int | None:
    # counts stay whole numbers; a sum of integers too, so an answer says 12, not 12.0
    if value is None or isinstance(value, int):
        return value
    return float(value)


def rounded(value: Any) -> Any:
    """An average or a ratio as the sentence states it (data.value keeps every digit)."""
    if not isinstance(value, float) or value.is_integer():
        return value
    return round(value, 2) if abs(value) >= 1 else float(f"{value:.4g}")


def _basis(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def measure_named(c: RenderContext, read: Mapping[str, Any]) -> str:
    """The measure as the answer names it: a declared one by its words, else the
    function's word with the field's name."""
    name, function, field = read["measure"], read["function"], read.get("field")
    spec = c.catalog.entities[c.plan.entity_type].measures.get(name or "")
    if spec is not None and c.plan.measure is not None and c.plan.measure.name == name:
        return declared_label(spec, name, c.zh)
    word = measure_words(function, c.zh)
    if field is None:
        return word
    shown = c.field(field)
    if function == "count_distinct":
        return f"不同{shown}数" if c.zh else f"Number of distinct {shown} values"
    if c.zh:
        return f"{shown}{word}" if function == "sum" else f"{word}{shown}"
    return f"{word} {shown}"


def _render(c: RenderContext) -> tuple[str, dict[str, Any], list[str]]:
    read = c.result.data
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
    what, n = measure_named(c, read), read["values"]
    if read["value"] is None:
        if read["function"] == RATIO:
            text = (
                f"{c.many}{c.where()}的{what}无从计算（分母为 0 或没有值）。"
                if c.zh
                else f"{what} of {c.many}{c.where()} cannot be computed "
                "(its denominator is 0 or has no value)."
            )
        else:
            field = c.field(read["field"]) if read.get("field") else what
            text = (
                f"没有{c.many}{c.where()}有{field}。"
                if c.zh
                else f"No {c.many}{c.where()} have a {field}."
            )
        return text, data, []
    cites = c.evidence_ids()
    value = c.shown(rounded(read["value"]))
    if c.zh:
        text = f"{c.many}{c.where()}的{what} {value}（共 {n} 条）。依据：{c.cite(cites)}"
    else:
        text = f"{what} of {c.many}{c.where()}: {value} (over {n}). Evidence: {c.cite(cites)}"
    return text, data, cites


def _agrees(c: ConsistencyContext) -> Iterator[str]:
    read = c.result.data
    for key in ("value", "function", "measure"):
        if c.data.get(key) != read.get(key):
            yield f"data.{key} is {c.data.get(key)!r}, the execution read {read.get(key)!r}"
    cited = {r.entity_id for r in c.result.rows}
    for eid in (c.data.get("rows") or {}).get("ids") or []:
        if str(eid) not in cited:
            yield f"the answer cites {eid} as aggregated, not in this result"


KIND = QueryKind(
    QueryType.AGGREGATE,
    AnswerContract.AGGREGATE_WITH_BASIS,
    frozenset({"value", "measure", "function", "filters", "rows"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(),
    intent=(
        "one measure under the filters: sum, avg, min, max or count_distinct of a field "
        "whose catalog aggregations allow it, count() of the rows, or a declared measure"
    ),
    spellings=("sum",),
    # Other measure words (total, 平均, 最高 … asked as a value, a declared measure's
    # synonyms) are read by dsl/question/functions.py; these name a sum outright.
    cues=(r"\bsum of\b", r"总和"),
    cue_rank=4,
    # (a question naming no function sums: "sum of budget", "预算总和")
    policy=PlannerPolicy(shows_fields=True, measure=True, measure_aggregation=FUNCTION),
    build=_build,
    render=_render,
    consistent=_agrees,
)
