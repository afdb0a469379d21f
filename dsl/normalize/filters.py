"""Filter binding: each filter's field is a filterable catalog name and its operator is
one the field allows."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Plan
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.names import field_spec, filterable, resolve_filter_field
from qdsl.dsl.normalize.related import is_related, resolve_related
from qdsl.dsl.normalize.related_rows import names_relations, related_rows_spec
from qdsl.dsl.suggest import did_you_mean, suggest

_MAX_BINDINGS = 1024


def spec_for(
    ent: EntitySpec, f: Filter, index: int, catalog: Catalog | None = None
) -> tuple[str, FieldSpec]:
    """The bound name and spec of the field a filter names, or an `unknown_field` refusal.

    With the catalog, a path through declared relations (`customer.city`) binds
    to the related entity's field (`dsl.normalize.related`)."""
    if catalog is not None and names_relations(catalog, ent, f.field):
        return related_rows_spec(catalog, ent, f, index)
    if catalog is not None and is_related(f.field):
        related, related_spec, _ = resolve_related(catalog, ent, f, index)
        return related, related_spec
    bindings = ent._filter_bindings
    found = bindings.get(f.field)
    if found is not None:
        return found
    name = resolve_filter_field(ent, f.field)
    spec = field_spec(ent, name) if name is not None else None
    if name is not None and spec is not None:
        if len(bindings) < _MAX_BINDINGS:  # bounded: any text can be written as a name
            bindings[f.field] = (name, spec)
        return name, spec
    known = [n for n in filterable(ent) if n not in ent.sensitive]
    spellings = {n: n for n in known}
    spellings.update((a, t) for a, t in ent.names.items() if t in known)
    suggestions = suggest(f.field, spellings)
    raise PlanError(
        "unknown_field",
        f"`{f.field}` is not a filterable field of {ent.name}",
        hint=did_you_mean(suggestions, known, f"fields of {ent.name}"),
        details=where(
            f"filters[{index}].field",
            f.span,
            entity=ent.name,
            field=f.field,
            suggestions=list(suggestions),
        ),
    )


def bind_filters(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    out: list[Filter] = []
    for i, f in enumerate(plan.filters):
        name, spec = spec_for(ent, f, i, env.catalog)
        if f.operator not in spec.operators and not names_relations(env.catalog, ent, name):
            allowed = [op.value for op in spec.operators]
            suggestions = suggest(f.operator.value, allowed)
            raise PlanError(
                "operator_not_allowed",
                f"operator `{f.operator.value}` is not allowed on {ent.name}.{name}",
                hint=f"{ent.name}.{name} allows: {', '.join(allowed)}",
                details=where(
                    f"filters[{i}].operator",
                    f.span,
                    entity=ent.name,
                    field=name,
                    operator=f.operator.value,
                    allowed=allowed,
                    suggestions=list(suggestions),
                ),
            )
        out.append(f if name == f.field else f.model_copy(update={"field": name}))
    if all(new is old for new, old in zip(out, plan.filters, strict=True)):
        return plan
    return plan.model_copy(update={"filters": tuple(out)})
