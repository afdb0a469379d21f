"""Filters on a field of a related entity (`customer.city` on orders).

A plan names the relations of a path and a field of the entity it reaches,
never a table or a column: the path is resolved through the catalog's declared
relations (`dsl.catalog.relations.relation_path`, at most two hops) and the
field bound on the entity at its end like any filter of that entity. Only
column fields are reachable (a fact field lives in the facts store, not in a
joinable row), and a sensitive field of the related entity stays unreachable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.catalog.relations import RelationStep, relation_named, relation_path
from qdsl.dsl.errors import PlanError
from qdsl.dsl.normalize.env import where

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec
    from qdsl.dsl.ir import Filter

SEPARATOR = "."


def is_related(field: str) -> bool:
    return SEPARATOR in field


def split_path(field: str) -> tuple[tuple[str, ...], str]:
    """`a.b.field` -> (("a", "b"), "field")."""
    *names, last = field.split(SEPARATOR)
    return tuple(names), last


def canonical_names(catalog: Catalog, ent: EntitySpec, names: tuple[str, ...]) -> list[str]:
    """Relation words as the relations' names, up to the first word naming none
    (kept as written, for the refusal to name)."""
    here = ent.name
    canonical: list[str] = []
    for word in names:
        known = catalog.relation_steps.get(here, {})
        name = word if word in known else (relation_named(catalog, here, word) or word)
        canonical.append(name)
        step = known.get(name)
        if step is None:
            break
        here = step.target
    return canonical


def related_path(
    catalog: Catalog, ent: EntitySpec, names: tuple[str, ...]
) -> tuple[RelationStep, ...]:
    """The steps of a path written with relation names or their synonyms."""
    return relation_path(catalog, ent.name, canonical_names(catalog, ent, names))


def resolve_related(
    catalog: Catalog, ent: EntitySpec, f: Filter, index: int
) -> tuple[str, FieldSpec, tuple[RelationStep, ...]]:
    """The bound path (`relation.field`, canonical names), the related field's spec
    and the join steps; refused with a typed error where the path or field is not
    declared."""
    from qdsl.dsl.normalize.filters import spec_for

    names, last = split_path(f.field)
    try:
        steps = related_path(catalog, ent, names)
    except PlanError as error:
        error.details.update(where(f"filters[{index}].field", f.span, field=f.field))
        raise
    target = catalog.entities[steps[-1].target]
    name, spec = spec_for(target, f.model_copy(update={"field": last}), index)
    if name in target.sensitive:
        # refused as unknown, as on the entity itself: its existence is not hinted at
        raise PlanError(
            "unknown_field",
            f"`{last}` is not a filterable field of {target.name}",
            hint=f"fields of {target.name} reachable through `{'.'.join(names)}`",
            details=where(f"filters[{index}].field", f.span, entity=target.name, field=f.field),
        )
    if spec.column is None:
        raise PlanError(
            "relation_field_not_column",
            f"`{target.name}.{name}` is kept as a fact, not a column; "
            "a condition across a relation needs a column field",
            hint=f"filter {target.name} directly on `{name}`",
            details=where(f"filters[{index}].field", f.span, entity=target.name, field=name),
        )
    bound = SEPARATOR.join((*(s.name for s in steps), name))
    return bound, spec, steps


def resolve_related_projection(
    catalog: Catalog, ent: EntitySpec, name: str, index: int
) -> tuple[str, tuple[RelationStep, ...]]:
    """A projected `relation.field` (the customer's city of each order): the bound
    path and its steps. Only many-to-one steps: a row has one related row to show
    a value of (an order's payments have many; a count or a filter asks for them)."""
    from qdsl.dsl.catalog import Cardinality
    from qdsl.dsl.normalize.names import resolve_projection
    from qdsl.dsl.suggest import did_you_mean, suggest

    names, last = split_path(name)
    at = f"projection[{index}]"
    try:
        steps = related_path(catalog, ent, names)
    except PlanError as error:
        error.details.update(where(at, None, field=name))
        raise
    many = [s.name for s in steps if s.cardinality is not Cardinality.MANY_TO_ONE]
    if many:
        raise PlanError(
            "relation_many_values",
            f"`{'.'.join(names)}` reaches many {steps[-1].target} rows of each {ent.name}: "
            "a projection shows one value per row",
            hint=f"filter on `{name}`, or count {steps[-1].target} rows instead",
            details=where(at, None, entity=ent.name, field=name, relations=many),
        )
    target = catalog.entities[steps[-1].target]
    found = resolve_projection(target, last)
    column = target.column_for(found) if found is not None else None
    if found is None or column is None or found in target.sensitive:
        known = [
            n
            for n in target.projectable
            if target.column_for(n) is not None and n not in target.sensitive
        ]
        raise PlanError(
            "unknown_field",
            f"`{last}` is not a projectable column of {target.name}",
            hint=did_you_mean(
                suggest(last, {n: n for n in known}),
                known,
                f"fields of {target.name} reachable through `{'.'.join(names)}`",
            ),
            details=where(at, None, entity=target.name, field=name),
        )
    return SEPARATOR.join((*(s.name for s in steps), found)), steps
