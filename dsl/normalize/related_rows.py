"""Filters on related rows themselves, not on a field of them: `payments is null`
(an order with no payment), `customer.orders is not null` (two hops).

A path that names only declared relations (or their synonyms) is such a filter
when no own field of the entity bears its first name. It takes `is null` (no
related row reached through the whole path, within the caller's tenant) or
`is not null` (some related row): any other operator would compare a value no
row holds. The bound field is the path of canonical relation names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.catalog.relations import rows_path
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Operator
from qdsl.dsl.normalize.env import where
from qdsl.dsl.normalize.related import SEPARATOR, canonical_names, related_path

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec
    from qdsl.dsl.ir import Filter


def names_relations(catalog: Catalog | None, ent: EntitySpec, field: str) -> bool:
    """Whether `field` is a path of relations alone, in names or synonyms (and its
    first word no field of the entity): what the plan names are related rows."""
    from qdsl.dsl.normalize.names import resolve_filter_field

    names = tuple(field.split(SEPARATOR))
    if catalog is None or resolve_filter_field(ent, names[0]) is not None:
        return False
    canonical = canonical_names(catalog, ent, names)
    return len(canonical) == len(names) and bool(
        rows_path(catalog, ent.name, SEPARATOR.join(canonical))
    )


def related_rows_spec(
    catalog: Catalog, ent: EntitySpec, f: Filter, index: int
) -> tuple[str, FieldSpec]:
    """The bound path of a filter on related rows and the related entity's id spec
    (what is tested: whether a row is there); refused unless its operator is
    `is null` / `is not null`."""
    try:
        steps = related_path(catalog, ent, tuple(f.field.split(SEPARATOR)))
    except PlanError as error:
        error.details.update(where(f"filters[{index}].field", f.span, field=f.field))
        raise
    bound = SEPARATOR.join(s.name for s in steps)
    if f.operator is not Operator.IS_NULL:
        raise PlanError(
            "operator_not_allowed",
            f"`{bound}` names {steps[-1].target} rows, not a field of them: "
            f"operator `{f.operator.value}` compares a value they do not have",
            hint=f"`{bound} is null` (no related row) or `{bound} is not null` (some related "
            f"row); or filter on a field of them, e.g. `{bound}.<field>`",
            details=where(
                f"filters[{index}].operator",
                f.span,
                entity=ent.name,
                field=bound,
                operator=f.operator.value,
                allowed=[Operator.IS_NULL.value],
            ),
        )
    target = catalog.entities[steps[-1].target]
    spec = target.filter_spec(target.id)
    assert spec is not None  # the implicit id is always filterable
    return bound, spec
