"""Filter values: their shape checked against operator and field type, then normalized.

Normalized values are what the executor binds and what `semantic_facts.value_norm`
holds, so both sides go through `normalize_text` (docs/catalog.md):
  * enum values become the canonical value (through the field's aliases);
  * `equals_or_alias` on a field with aliases: a value matching an alias becomes the
    canonical key exactly as the catalog writes it (A-share -> A股);
  * other text is `normalize_text`ed; ids become strings; numbers, booleans and ISO
    dates stay as they are.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

from qdsl.dsl.catalog import EntitySpec, FieldSpec, FieldType
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import LIST_OPERATORS, Filter, Operator, Plan, Scalar, Span, Value
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.filters import spec_for
from qdsl.dsl.operators import Arity, capability
from qdsl.dsl.suggest import did_you_mean, suggest
from qdsl.dsl.textnorm import normalize_text

_EXPECTED: dict[FieldType, str] = {
    FieldType.TEXT: "a non-empty string",
    FieldType.ENUM: "a non-empty string",
    FieldType.ID: "a string or integer id",
    FieldType.NUMBER: "a finite number",
    FieldType.DATE: "an ISO date string (YYYY-MM-DD)",
    FieldType.DATETIME: "an ISO datetime string (YYYY-MM-DDTHH:MM:SS[+HH:MM])",
    FieldType.BOOL: "true or false",
}


def _json(value: Value) -> Any:
    return list(value) if isinstance(value, tuple) else value


class _Site:
    """One filter being checked: where it is and how to refuse it."""

    __slots__ = ("ent", "filter", "index", "name")

    def __init__(self, ent: EntitySpec, name: str, f: Filter, index: int) -> None:
        self.ent, self.name, self.filter, self.index = ent, name, f, index

    def path(self, element: int | None) -> str:
        base = f"filters[{self.index}].value"
        return base if element is None else f"{base}[{element}]"

    def error(
        self, subtype: str, message: str, hint: str, element: int | None, **extra: Any
    ) -> PlanError:
        span: Span | None = self.filter.span
        details = where(
            self.path(element),
            span,
            entity=self.ent.name,
            field=self.name,
            operator=self.filter.operator.value,
            value=_json(self.filter.value),
            **extra,
        )
        return PlanError(subtype, message, hint=hint, details=details)


def _scalar_ok(kind: FieldType, v: Scalar) -> bool:
    if kind in (FieldType.TEXT, FieldType.ENUM):
        return isinstance(v, str) and normalize_text(v) != ""
    if kind is FieldType.ID:
        return (isinstance(v, str) and v.strip() != "") or (
            isinstance(v, int) and not isinstance(v, bool)
        )
    if kind is FieldType.NUMBER:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if kind is FieldType.BOOL:
        return isinstance(v, bool)
    return isinstance(v, str) and _as_time(kind, v) is not None


def _as_time(kind: FieldType, v: str) -> date | datetime | None:
    try:
        if kind is FieldType.DATE:
            return date.fromisoformat(v)
        moment = datetime.fromisoformat(v)
    except ValueError:
        return None
    # Naive and aware datetimes do not compare; a naive one is read as UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _ordered(kind: FieldType, lo: Scalar, hi: Scalar) -> bool:
    if kind in (FieldType.DATE, FieldType.DATETIME):
        a, b = _as_time(kind, str(lo)), _as_time(kind, str(hi))
        return a is not None and b is not None and a <= b
    if isinstance(lo, int | float) and isinstance(hi, int | float):
        return lo <= hi
    return True


def _check_shape(site: _Site, spec: FieldSpec) -> None:
    f, op = site.filter, site.filter.operator
    value = f.value
    arity = capability(op).arity
    if arity is Arity.FLAG:
        if not isinstance(value, bool):
            raise site.error(
                "invalid_value",
                "`is_null` takes true (is null) or false (is not null)",
                "write `is null`, or in JSON a boolean value",
                None,
            )
        return
    if arity is Arity.LIST:
        if not isinstance(value, tuple) or not value:
            raise site.error(
                "invalid_value",
                f"`{op.value}` takes a non-empty list of values",
                'write the values as a list, e.g. in ("a", "b")',
                None,
            )
    elif arity is Arity.PAIR:
        if not isinstance(value, tuple) or len(value) != 2:
            raise site.error(
                "invalid_value",
                "`between` takes exactly two values, low and high",
                "write `between LOW and HIGH`, or in JSON a list of two values",
                None,
            )
    elif value is None or isinstance(value, tuple):
        raise site.error(
            "invalid_value",
            f"`{op.value}` takes a single value",
            f"give {site.name} one value; use `in` for several",
            None,
        )
    items = value if isinstance(value, tuple) else (value,)
    for j, v in enumerate(items):
        if not _scalar_ok(spec.type, v):
            raise site.error(
                "invalid_value",
                f"{site.ent.name}.{site.name} is a {spec.type.value} field, "
                f"{v!r} is not {_EXPECTED[spec.type]}",
                f"give {_EXPECTED[spec.type]}",
                j if isinstance(value, tuple) else None,
                expected=spec.type.value,
            )
    if arity is Arity.PAIR and isinstance(value, tuple) and not _ordered(spec.type, *value):
        raise site.error(
            "invalid_value",
            f"`between` bounds are out of order: {value[0]!r} > {value[1]!r}",
            "write the low bound first",
            None,
        )


def check_values(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    for i, f in enumerate(plan.filters):
        name, spec = spec_for(ent, f, i, env.catalog)
        _check_shape(_Site(ent, name, f, i), spec)
    return plan


def _normalize_scalar(site: _Site, spec: FieldSpec, v: Scalar, element: int | None) -> Scalar:
    op = site.filter.operator
    if spec.type is FieldType.ENUM and isinstance(v, str):
        spellings = spec.value_spellings
        found = spellings.get(normalize_text(v))
        if found is None:
            known = {s: c for c, ss in spec.aliases.items() for s in ss}
            known.update((c, c) for c in spec.values)
            suggestions = suggest(v, known)
            raise site.error(
                "unknown_value",
                f"{v!r} is not a value of {site.ent.name}.{site.name}",
                did_you_mean(suggestions, spec.values, f"values of {site.ent.name}.{site.name}"),
                element,
                allowed=list(spec.values),
                suggestions=list(suggestions),
            )
        return found
    if spec.type is FieldType.TEXT and isinstance(v, str):
        if op is Operator.EQUALS_OR_ALIAS and spec.aliases:
            return spec.value_spellings.get(normalize_text(v), normalize_text(v))
        return normalize_text(v)
    if spec.type is FieldType.ID:
        return str(v).strip()
    return v


def _normalize_filter(site: _Site, spec: FieldSpec) -> Filter:
    f = site.filter
    value = f.value
    if f.operator is Operator.IS_NULL or value is None:
        return f
    new: Value
    if isinstance(value, tuple):
        items = [_normalize_scalar(site, spec, v, j) for j, v in enumerate(value)]
        if f.operator in LIST_OPERATORS:
            items = list(dict.fromkeys(items))
        new = tuple(items)
    else:
        new = _normalize_scalar(site, spec, value, None)
    return f if new == value and type(new) is type(value) else f.model_copy(update={"value": new})


def normalize_values(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    out = tuple(
        _normalize_filter(_Site(ent, name, f, i), spec)
        for i, f in enumerate(plan.filters)
        for name, spec in (spec_for(ent, f, i, env.catalog),)
    )
    if all(new is old for new, old in zip(out, plan.filters, strict=True)):
        return plan
    return plan.model_copy(update={"filters": out})
