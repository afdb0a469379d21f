"""Bind a plan's filters to catalog fields and turn their values into parameters.

The normalizer has already bound names; this is the executor's own fail-closed
check (a plan built by hand or by another caller gets the same guarantees) and
the one place values are prepared for binding. Names of bound parameters
depend only on the filter's position, never on its value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qdsl.dsl.catalog import AliasGroup, EntitySpec, FieldSpec, FieldType
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import LIST_OPERATORS, Filter, Operator, Plan, Scalar
from qdsl.dsl.textnorm import normalize_text

# Fact filters that select entities having a matching fact; the others
# (not_equals, not_in, is_null) select entities lacking one.
POSITIVE_FACT_OPS = frozenset(
    {Operator.EQUALS, Operator.EQUALS_OR_ALIAS, Operator.IN, Operator.CONTAINS}
)
LIKE_ESCAPE = "\\"
# PostgreSQL text cannot hold NUL, so no stored value contains one; binding the
# replacement character instead keeps such a value a harmless non-match on
# both dialects (the driver would otherwise refuse the whole statement).
_NUL = "\x00"
_NUL_STANDIN = "\ufffd"


def text_value(value: object) -> str:
    """A filter value as normalized text safe to bind on every dialect."""
    return normalize_text(str(value)).replace(_NUL, _NUL_STANDIN)


@dataclass(frozen=True)
class BoundFilter:
    index: int
    filter: Filter
    field: FieldSpec | None  # None for the entity's id / label
    column: str | None  # the table column, None for fact fields
    fact: str | None  # the semantic_facts predicate, None for column fields
    kind: FieldType

    @property
    def op(self) -> Operator:
        return self.filter.operator

    @property
    def param(self) -> str:
        return f"f{self.index}"

    @property
    def is_fact(self) -> bool:
        return self.fact is not None

    @property
    def positive_fact(self) -> bool:
        return self.fact is not None and self.op in POSITIVE_FACT_OPS

    def shape(self) -> tuple[str, ...]:
        """What of this filter shapes SQL: field and operator, and for is_null its sense."""
        sense = (
            ("null" if self.filter.value is not False else "not_null",)
            if self.op is Operator.IS_NULL
            else ()
        )
        return (self.filter.field, self.op.value, *sense)


def _unknown(entity: EntitySpec, name: str) -> PlanError:
    return PlanError(
        "unknown_field",
        f"`{name}` is not a filterable field of {entity.name}",
        hint="see `qdsl catalog` for the entity's fields",
        details={"entity_type": entity.name, "field": name},
    )


def bind_filter(entity: EntitySpec, index: int, flt: Filter) -> BoundFilter:
    name = entity.names.get(flt.field, flt.field)
    if name == "label":
        name = entity.label
    spec = entity.filter_spec(name)
    if spec is None:
        raise _unknown(entity, flt.field)
    if spec.sensitive:
        raise PlanError(
            "sensitive_field",
            f"`{name}` of {entity.name} is sensitive and cannot be filtered on",
            hint="drop the filter",
        )
    if flt.operator not in spec.operators:
        raise PlanError(
            "operator_not_allowed",
            f"operator `{flt.operator.value}` is not allowed on {entity.name}.{name}",
            hint=f"use one of: {', '.join(o.value for o in spec.operators)}",
        )
    # `field` stays None for the implicit id / label: nothing declared behind them.
    return BoundFilter(index, flt, entity.fields.get(name), spec.column, spec.fact, spec.type)


def bind_filters(plan: Plan, entity: EntitySpec) -> tuple[BoundFilter, ...]:
    return tuple(bind_filter(entity, i, f) for i, f in enumerate(plan.filters))


def contains_param(term: str, dialect: str) -> str:
    """The bound form of a substring search: `instr` takes the text itself on SQLite
    (whose LIKE refuses patterns over 50 KB); LIKE/ILIKE take an escaped pattern."""
    return term if dialect == "sqlite" else like_pattern(term)


def like_pattern(term: str) -> str:
    """`%term%` with LIKE's wildcards escaped, so a value is always literal text."""
    escaped = (term.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%")).replace(
        "_", LIKE_ESCAPE + "_"
    )
    return f"%{escaped}%"


def _as_tuple(value: Any) -> tuple[Scalar, ...]:
    if isinstance(value, tuple):
        return value
    return () if value is None else (value,)


def _alias_group(field: FieldSpec | None, value: Scalar) -> AliasGroup | None:
    """The catalog alias key `value` spells, with every normalized spelling of it."""
    return field.alias_group(str(value)) if field is not None else None


def alias_set(field: FieldSpec | None, value: Scalar) -> tuple[str, ...]:
    """Every normalized spelling meaning `value` (the value's own included), sorted."""
    group = _alias_group(field, value)
    return tuple(sorted(group[1])) if group is not None else (text_value(value),)


def _coerce(bf: BoundFilter, value: Scalar) -> Any:
    if bf.kind is FieldType.NUMBER:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise PlanError("bad_value", f"`{bf.filter.field}` needs a number", hint="")
        try:
            return float(value)
        except ValueError:
            raise PlanError(
                "bad_value", f"`{bf.filter.field}` needs a number", hint="write a number"
            ) from None
    if bf.kind is FieldType.BOOL:
        return bool(value)
    if bf.kind in (FieldType.DATE, FieldType.DATETIME):
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise PlanError(
                "bad_value",
                f"`{bf.filter.field}` needs an ISO-8601 date or timestamp",
                hint="write e.g. 2026-11-01 or 2026-11-01T08:00:00Z",
            ) from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if bf.kind is FieldType.ENUM:
        return _canonical_enum(bf, value)
    if bf.kind is FieldType.ID:
        return str(value).replace(_NUL, _NUL_STANDIN)
    return text_value(value)


def _one(bf: BoundFilter) -> Scalar:
    values = _as_tuple(bf.filter.value)
    if len(values) != 1:
        raise PlanError(
            "bad_value",
            f"`{bf.filter.field}` {bf.op.value} takes one value",
            hint="write a single value",
        )
    return values[0]


def filter_params(bf: BoundFilter, dialect: str) -> dict[str, Any]:
    """The bound values of one filter (names match `executor.predicates`)."""
    params: dict[str, Any] = {}
    if bf.fact is not None:
        params[f"{bf.param}_pred"] = bf.fact
    params.update(_value_params(bf, dialect))
    return params


def _value_params(bf: BoundFilter, dialect: str) -> dict[str, Any]:
    p = bf.param
    op = bf.op
    if op is Operator.IS_NULL:
        return {}
    values = _as_tuple(bf.filter.value)
    if op is Operator.BETWEEN:
        if len(values) != 2:
            raise PlanError("bad_value", "between takes two values", hint="between x and y")
        return {f"{p}_lo": _coerce(bf, values[0]), f"{p}_hi": _coerce(bf, values[1])}
    if op is Operator.CONTAINS:
        return {p: contains_param(text_value(_one(bf)), dialect)}
    if bf.is_fact:
        if bf.kind is FieldType.NUMBER and op not in LIST_OPERATORS:
            return {p: _coerce(bf, _one(bf))}
        norms = {n for v in _needs_values(bf, values) for n in alias_set(bf.field, v)}
        return {p: sorted(norms)}
    if op in LIST_OPERATORS:
        return {p: [_coerce(bf, v) for v in _needs_values(bf, values)]}
    if op is Operator.EQUALS_OR_ALIAS and bf.kind is FieldType.ENUM:
        return {p: [_canonical_enum(bf, _one(bf))]}
    if op is Operator.EQUALS_OR_ALIAS:
        return {p: list(alias_set(bf.field, _one(bf)))}
    return {p: _coerce(bf, _one(bf))}


def _canonical_enum(bf: BoundFilter, value: Scalar) -> str:
    group = _alias_group(bf.field, value)
    if group is not None:
        return group[0]
    norm = normalize_text(str(value))
    if bf.field is not None:
        for v in bf.field.values:
            if normalize_text(v) == norm:
                return v
    return str(value).replace(_NUL, _NUL_STANDIN)


def _needs_values(bf: BoundFilter, values: Sequence[Scalar]) -> Sequence[Scalar]:
    if not values:
        raise PlanError(
            "bad_value", f"`{bf.filter.field}` {bf.op.value} needs a value", hint="add a value"
        )
    return values


def fallback_terms(bf: BoundFilter) -> tuple[str, ...]:
    """The text a fact filter falls back to: its value's spellings, normalized."""
    values = _as_tuple(bf.filter.value)
    if bf.op is Operator.CONTAINS:
        return (text_value(_one(bf)),)
    return tuple(sorted({n for v in values for n in alias_set(bf.field, v) if n}))


def subject_ids(plan: Plan, entity: EntitySpec) -> tuple[str, ...]:
    """Ids the plan names as subjects: referenced objects of this entity type."""
    seen: dict[str, None] = {}
    for ref in plan.scope.referenced_objects:
        if ref.entity_type == entity.name:
            seen.setdefault(ref.id, None)
    return tuple(seen)


def id_filter_values(bfs: Sequence[BoundFilter], entity: EntitySpec) -> tuple[str, ...]:
    """Ids named by equals/in filters on the entity's id (compare subjects)."""
    out: dict[str, None] = {}
    for bf in bfs:
        if bf.column == entity.id and bf.op in (Operator.EQUALS, Operator.IN):
            for v in _as_tuple(bf.filter.value):
                out.setdefault(str(v), None)
    return tuple(out)
