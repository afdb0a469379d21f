"""A plan bound to the catalog and the caller's tenant: what the executor compiles.

`dsl.normalize.normalize` is the one binder: it resolves every name, checks
every operator and value, and returns a `BoundPlan` beside the plan. Here the
normalized plan's filters are joined to their catalog specs and their values
typed for binding (numbers as floats, instants as UTC datetimes, fact values
as the set of normalized spellings that mean them). The executor reads this
record and never resolves a name or checks a value again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec, FieldType
from qdsl.dsl.catalog.relations import RelationStep, relation_path, rows_path
from qdsl.dsl.errors import InternalError
from qdsl.dsl.ir import LIST_OPERATORS, Filter, Operator, Plan, Scalar
from qdsl.dsl.operators import HOLDS_FACT
from qdsl.dsl.textnorm import normalize_text

# Fact filters that select entities having a matching fact; the others
# (not_equals, not_in, is_null) select entities lacking one (`dsl.operators`).
POSITIVE_FACT_OPS = HOLDS_FACT
# PostgreSQL text cannot hold NUL, so no stored value contains one; binding the
# replacement character instead keeps such a value a harmless non-match on
# both dialects (the driver would otherwise refuse the whole statement).
RELATION_SEPARATOR = "."
_NUL = "\x00"
_NUL_STANDIN = "\ufffd"


def text_value(value: object) -> str:
    """A filter value as normalized text safe to bind on every dialect."""
    return normalize_text(str(value)).replace(_NUL, _NUL_STANDIN)


def alias_set(field: FieldSpec | None, value: Scalar) -> tuple[str, ...]:
    """Every normalized spelling meaning `value` (the value's own included), sorted."""
    group = field.alias_group(str(value)) if field is not None else None
    return tuple(sorted(group[1])) if group is not None else (text_value(value),)


def as_tuple(value: Any) -> tuple[Scalar, ...]:
    if isinstance(value, tuple):
        return value
    return () if value is None else (value,)


@dataclass(frozen=True)
class BoundFilter:
    """One filter of a normalized plan with its catalog spec and typed value."""

    index: int
    filter: Filter
    field: FieldSpec
    value: Any  # what binds: a scalar, a list (in, aliases, fact spellings), (lo, hi), or None
    # the declared relations followed to the entity `field` belongs to (empty: the
    # plan's own entity); the executor tests the field on a tenant-bound related row
    path: tuple[RelationStep, ...] = ()

    @property
    def related_rows(self) -> bool:
        """`payments is null`: the filter names the related rows of its path, no
        field of them (`field` is then the related entity's id)."""
        return len(self.path) == self.filter.field.count(RELATION_SEPARATOR) + 1

    @property
    def op(self) -> Operator:
        return self.filter.operator

    @property
    def kind(self) -> FieldType:
        return self.field.type

    @property
    def column(self) -> str | None:
        return self.field.column

    @property
    def fact(self) -> str | None:
        return self.field.fact

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


@dataclass(frozen=True)
class BoundScope:
    """A plan's project scope bound through the catalog (`[scope]`): the rows
    kept are those whose `column` (the field `field`, or the entity's id) holds
    `value`."""

    field: str
    column: str
    value: Any  # typed as an equals filter on `field` binds it


@dataclass(frozen=True)
class BoundPlan:
    """A normalized plan, its entity and filters bound, and the caller's tenant."""

    plan: Plan
    catalog: Catalog
    entity: EntitySpec
    filters: tuple[BoundFilter, ...]
    # from the caller's context, never from the plan; None only where nothing
    # runs (`qdsl compile` without --tenant shows the parameter unbound)
    tenant_id: str | None
    scope: BoundScope | None = None


def bind_scope(plan: Plan, catalog: Catalog) -> BoundScope | None:
    """The plan's project scope on its entity (None: the plan has none); a scope
    the catalog cannot apply here is refused by the normalizer before this."""
    value = plan.scope.project_id
    if value is None:
        return None
    name = catalog.scope_field(plan.entity_type)
    entity = catalog.entities.get(plan.entity_type)
    spec = entity.filter_spec(name) if entity is not None and name is not None else None
    if name is None or spec is None or spec.column is None:
        raise _not_normalized(f"the project scope of `{plan.entity_type}`")
    return BoundScope(name, spec.column, _typed(spec.type, value))


def _typed(kind: FieldType, value: Scalar) -> Any:
    """A normalized scalar as the Python value its column binds."""
    if kind is FieldType.NUMBER:
        return float(value)
    if kind is FieldType.BOOL:
        return bool(value)
    if kind in (FieldType.DATE, FieldType.DATETIME):
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if kind in (FieldType.ID, FieldType.ENUM):
        return str(value).replace(_NUL, _NUL_STANDIN)
    return text_value(value)


def typed_value(spec: FieldSpec, flt: Filter) -> Any:
    """The value a normalized filter binds (see `BoundFilter.value`)."""
    op, values = flt.operator, as_tuple(flt.value)
    if op is Operator.IS_NULL:
        return None
    if op is Operator.BETWEEN:
        return (_typed(spec.type, values[0]), _typed(spec.type, values[1]))
    if op is Operator.CONTAINS:
        return text_value(values[0])
    if spec.fact is not None:
        if spec.type is FieldType.NUMBER and op not in LIST_OPERATORS:
            return _typed(spec.type, values[0])
        return sorted({n for v in values for n in alias_set(spec, v)})
    if op in LIST_OPERATORS:
        return [_typed(spec.type, v) for v in values]
    if op is Operator.EQUALS_OR_ALIAS:
        if spec.type is FieldType.ENUM:
            return [_typed(spec.type, values[0])]
        return list(alias_set(spec, values[0]))
    return _typed(spec.type, values[0])


def bind_plan(plan: Plan, catalog: Catalog, tenant_id: str | None) -> BoundPlan:
    """Join a normalized plan to its catalog specs (names are already bound)."""
    entity = catalog.entities.get(plan.entity_type)
    if entity is None:
        raise _not_normalized(f"entity `{plan.entity_type}`")
    out = []
    for i, flt in enumerate(plan.filters):
        path: tuple[RelationStep, ...] = ()
        owner = entity
        rows = rows_path(catalog, entity.name, flt.field)
        if rows:
            target = catalog.entities[rows[-1].target]
            spec = target.filter_spec(target.id)
            assert spec is not None  # the implicit id is always filterable
            out.append(BoundFilter(i, flt, spec, None, rows))
            continue
        if RELATION_SEPARATOR in flt.field:
            names = tuple(flt.field.split(RELATION_SEPARATOR))
            path = relation_path(catalog, entity.name, names[:-1])
            owner = catalog.entities[path[-1].target]
        spec = owner.filter_spec(flt.field.rsplit(RELATION_SEPARATOR, 1)[-1])
        if spec is None:
            raise _not_normalized(f"filter field `{flt.field}`")
        out.append(BoundFilter(i, flt, spec, typed_value(spec, flt), path))
    return BoundPlan(plan, catalog, entity, tuple(out), tenant_id, bind_scope(plan, catalog))


def _not_normalized(what: str) -> InternalError:
    return InternalError(
        "plan_not_normalized",
        f"{what} is not a catalog name: only a normalized plan can be bound",
        hint="bind plans through qdsl.dsl.normalize.normalize",
    )
