"""Checks of the analytics keys: aggregations, grains, measures, relations, the time zone.

Run by the loader after the model validated, with the other checks, so every
problem of a catalog is reported at once, each under its dotted key.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from qdsl.dsl.catalog.model import Catalog
from qdsl.dsl.catalog.relations import RelationPathError, relation_path, relation_table
from qdsl.dsl.catalog.specs import EntitySpec, FieldSpec, MeasureSpec, RelationSpec
from qdsl.dsl.catalog.types import (
    FIELD_AGGREGATIONS,
    NUMERIC_AGGREGATIONS,
    TIME_TYPES,
    FieldType,
)
from qdsl.dsl.ir import Aggregation

Problems = list[tuple[str, str]]

# Types a relation key cannot have: nothing joins on a yes/no or a moment.
_NOT_KEYS = frozenset({FieldType.BOOL, FieldType.DATE, FieldType.DATETIME})


def check_analytics(catalog: Catalog) -> Problems:
    out: Problems = []
    out.extend(_check_timezone(catalog.timezone))
    for name, e in catalog.entities.items():
        for fname, f in e.fields.items():
            out.extend(_check_field_analytics(f"entities.{name}.fields.{fname}", f))
        for rname, rel in e.relations.items():
            out.extend(_check_relation(catalog, name, rname, rel))
        for mname, m in e.measures.items():
            out.extend(_check_measure(catalog, name, e, mname, m))
    out.extend(relation_table(catalog.entities)[1])
    return out


def _check_timezone(zone: str) -> Problems:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return [("timezone", f'`{zone}` is not an IANA time zone (e.g. "Europe/Berlin", "UTC")')]
    return []


def _check_field_analytics(key: str, f: FieldSpec) -> Problems:
    out: Problems = []
    if f.aggregations:
        if f.column is None:
            out.append((f"{key}.aggregations", "only column fields can be aggregated"))
        if f.sensitive:
            out.append((f"{key}.aggregations", "a sensitive field is never aggregated"))
        for fn in f.aggregations:
            if fn not in FIELD_AGGREGATIONS:
                out.append(
                    (
                        f"{key}.aggregations",
                        "`count` counts rows, not a field: declare it as a measure without a field",
                    )
                )
            elif fn in NUMERIC_AGGREGATIONS and f.type is not FieldType.NUMBER:
                out.append(
                    (
                        f"{key}.aggregations",
                        f"`{fn.value}` needs a number field, this one is {f.type.value}",
                    )
                )
    if f.grains:
        if f.type not in TIME_TYPES:
            out.append(
                (
                    f"{key}.grains",
                    f"only date and datetime fields have grains, not {f.type.value}",
                )
            )
        if f.column is None:
            out.append((f"{key}.grains", "only column fields can be grouped by a grain"))
        if f.sensitive:
            out.append((f"{key}.grains", "a sensitive field is never grouped on"))
    return out


def _check_relation(catalog: Catalog, name: str, rname: str, rel: RelationSpec) -> Problems:
    key = f"entities.{name}.relations.{rname}"
    e = catalog.entities[name]
    out: Problems = []
    if rname in e.fields or rname in e.measures:
        out.append((key, f"`{rname}` is also a field or a measure of `{name}`: rename one"))
    target = catalog.entities.get(rel.entity)
    if target is None:
        return [*out, (f"{key}.entity", f"no entity `{rel.entity}`")]
    out.extend(_check_key(f"{key}.key", e, rel.key, source=True))
    if rel.target_key is not None:
        if rel.target_key != target.id and rel.target_key not in target.fields:
            out.append(
                (
                    f"{key}.target_key",
                    f"`{rel.target_key}` is neither the id nor a field of `{rel.entity}`",
                )
            )
        else:
            out.extend(_check_key(f"{key}.target_key", target, rel.target_key, source=False))
    return out


def _check_key(key: str, e: EntitySpec, name: str, *, source: bool) -> Problems:
    if not name.strip():
        return [(key, "names no column")]
    if name == e.tenant:
        return [(key, f"`{name}` is the tenant column; every join is within one tenant already")]
    spec = e.fields.get(name)
    if spec is None:
        # a column of the table not declared as a field: `qdsl catalog check` sees it
        return []
    if spec.column is None:
        return [(key, f"`{name}` is a fact field; a relation joins on a column")]
    if spec.type in _NOT_KEYS:
        return [(key, f"`{name}` is a {spec.type.value} field and cannot be a key")]
    if not source and spec.type is not FieldType.ID and name != e.id:
        return [(key, f"`{name}` is a {spec.type.value} field; a target key is an id")]
    return []


def _check_measure(
    catalog: Catalog, name: str, e: EntitySpec, mname: str, m: MeasureSpec
) -> Problems:
    key = f"entities.{name}.measures.{mname}"
    if mname in e.fields:
        return [(key, f"`{mname}` is also a field of `{name}`: rename the measure")]
    if m.is_ratio:
        if m.function is not None or m.field is not None or m.times is not None:
            what = "no `function`, `field` or `times`"
            return [(key, f"a ratio has `numerator` and `denominator`, {what}")]
        if m.numerator is None or m.denominator is None:
            return [(key, "a ratio needs both `numerator` and `denominator`")]
        return [
            *_check_part(catalog, name, f"{key}.numerator", m.numerator),
            *_check_part(catalog, name, f"{key}.denominator", m.denominator),
        ]
    if m.function is None:
        return [(key, "a measure needs a `function` (or `numerator` and `denominator`)")]
    if m.function is Aggregation.COUNT:
        if m.field is not None:
            return [(f"{key}.field", "`count` counts rows; use `count_distinct` over a field")]
        if m.times is not None:
            return [(f"{key}.times", "`count` counts rows; it multiplies no fields")]
        return []
    if m.field is None:
        return [(f"{key}.field", f"`{m.function.value}` needs a `field`")]
    if m.times is not None:
        return _check_product(key, e, m.field, m.times, m.function)
    return _check_measure_field(f"{key}.field", e, m.field, m.function)


def _check_product(key: str, e: EntitySpec, fname: str, times: str, fn: Aggregation) -> Problems:
    """`field` × `times`: two number columns of the row. The fields' own `aggregations`
    do not apply: they bound what a plan may apply to the field, the product is the
    deployer's own value."""
    if fn not in NUMERIC_AGGREGATIONS:
        # distinct products are no quantity anyone asks for; refusing keeps the meaning plain
        allowed = ", ".join(sorted(a.value for a in NUMERIC_AGGREGATIONS))
        return [(f"{key}.function", f"a product of two fields is aggregated by {allowed}")]
    return [
        *_check_factor(f"{key}.field", e, fname),
        *_check_factor(f"{key}.times", e, times),
    ]


def _check_factor(key: str, e: EntitySpec, fname: str) -> Problems:
    spec = e.fields.get(fname)
    if spec is None:
        return [(key, f"no field `{fname}`")]
    if spec.column is None:
        return [(key, f"`{fname}` is a fact field; a product multiplies columns")]
    if spec.sensitive:
        return [(key, f"`{fname}` is sensitive and is never aggregated")]
    if spec.type is not FieldType.NUMBER:
        return [(key, f"a product multiplies number fields; `{fname}` is {spec.type.value}")]
    return []


def _check_measure_field(key: str, e: EntitySpec, fname: str, fn: Aggregation) -> Problems:
    if fname == e.id and fname not in e.fields:
        if fn is Aggregation.COUNT_DISTINCT:
            return []
        return [(key, f"`{fn.value}` of the id is not a measure; use `count_distinct`")]
    spec = e.fields.get(fname)
    if spec is None:
        return [(key, f"no field `{fname}`")]
    if spec.column is None:
        return [(key, f"`{fname}` is a fact field; a measure aggregates a column")]
    if spec.sensitive:
        return [(key, f"`{fname}` is sensitive and is never aggregated")]
    if fn in NUMERIC_AGGREGATIONS and spec.type is not FieldType.NUMBER:
        return [(key, f"`{fn.value}` needs a number field; `{fname}` is {spec.type.value}")]
    if spec.aggregations and fn not in spec.aggregations:
        allowed = ", ".join(a.value for a in spec.aggregations)
        return [(key, f"field `{fname}` allows only {allowed}")]
    return []


def _check_part(catalog: Catalog, name: str, key: str, part: str) -> Problems:
    *path, measure = part.split(".")
    try:
        steps = relation_path(catalog, name, path)
    except RelationPathError as exc:
        return [(key, f"`{part}`: {exc.message}")]
    owner = steps[-1].target if steps else name
    spec = catalog.entities[owner].measures.get(measure)
    if spec is None:
        return [(key, f"`{part}`: `{owner}` declares no measure `{measure}`")]
    if spec.is_ratio:
        return [(key, f"`{part}` is a ratio itself; a ratio's parts are aggregates")]
    return []
