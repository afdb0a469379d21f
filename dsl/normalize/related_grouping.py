"""A breakdown grouped across declared relations: by a field of the entity a
many-to-one path reaches (`group by customer.tier` on payments' orders'
customers: `order.customer.tier`), or by the related object itself
(`group by customer`: one group per customer, shown by its label).

Only many-to-one steps (at most two, as every relation path): each row then falls
in one group, so a count or a sum per group never counts a row twice. A path
through a one-to-many relation ("orders grouped by their lines' products") is
refused with the typed error saying what would do. The field at the end is held
to the rules of a grouping on its own entity (`check_groupings`: groupable,
not sensitive, not a fact, its grains). A name that is a field of the entity is
that field, never a relation of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.catalog import Cardinality
from qdsl.dsl.catalog.relations import RelationStep, relation_named
from qdsl.dsl.errors import PlanError
from qdsl.dsl.kinds.breakdown import check_groupings, groupable
from qdsl.dsl.normalize.related import SEPARATOR, related_path
from qdsl.dsl.suggest import did_you_mean, suggest

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog, EntitySpec
    from qdsl.dsl.ir import Grouping


def is_related_grouping(catalog: Catalog, ent: EntitySpec, field: str) -> bool:
    """Whether a grouping names a relation path rather than a field of `ent`."""
    first = field.split(SEPARATOR, maxsplit=1)[0]
    if SEPARATOR not in field and ent.names.get(field, field) in ent.fields:
        return False
    known = catalog.relation_steps.get(ent.name, {})
    return first in known or relation_named(catalog, ent.name, first) is not None


def grouping_path(
    catalog: Catalog, ent: EntitySpec, field: str
) -> tuple[tuple[RelationStep, ...], str | None]:
    """The many-to-one steps a related grouping takes and the field it ends on (None:
    the related object itself); refused where a step is not declared or many-valued."""
    names = field.split(SEPARATOR)
    here = ent
    rel: list[str] = []
    last: str | None = None
    for i, word in enumerate(names):
        if i and i == len(names) - 1 and here.names.get(word, word) in here.fields:
            last = word  # a field of the entity the path reached
            break
        name = relation_named(catalog, here.name, word) or word
        step = catalog.relation_steps.get(here.name, {}).get(name)
        if step is None and i and i == len(names) - 1:
            allowed = groupable(here)
            raise PlanError(
                "grouping_not_allowed",
                f"{here.name} cannot be grouped by `{word}`",
                hint=did_you_mean(suggest(word, allowed), allowed, f"fields of {here.name}"),
                details={"path": "group_by", "entity": here.name, "field": field},
            )
        if step is None:
            related_path(catalog, ent, tuple(names[: i + 1]))  # names what is declared
            raise PlanError(
                "unknown_field",
                f"`{word}` is no relation or field of {here.name}",
                hint=f"group by a field of {here.name}, a relation, or `relation.field`",
                details={"path": "group_by", "entity": here.name, "field": field},
            )
        rel.append(name)
        here = catalog.entities[step.target]
    steps = related_path(catalog, ent, tuple(rel))
    many = [s.name for s in steps if s.cardinality is not Cardinality.MANY_TO_ONE]
    if many:
        raise PlanError(
            "relation_many_values",
            f"`{SEPARATOR.join(rel)}` reaches many {steps[-1].target} rows of each {ent.name}: "
            "a row would fall in several groups",
            hint=f"break down {steps[-1].target} instead, or filter on `{field}`",
            details={"path": "group_by", "entity": ent.name, "field": field, "relations": many},
        )
    return steps, last


def bind_related_grouping(catalog: Catalog, ent: EntitySpec, g: Grouping) -> Grouping:
    """The grouping with its relations and field bound to their catalog names."""
    steps, last = grouping_path(catalog, ent, g.field)
    names = [s.name for s in steps]
    if last is None:
        if g.grain is not None:
            raise PlanError(
                "grain_not_allowed",
                f"`{g.field}` groups by the related {steps[-1].target}, which has no period",
                hint=f"group by a date field of {steps[-1].target}: "
                f"`{g.field}.<field> {g.grain.value}`",
                details={"path": "group_by", "entity": ent.name, "field": g.field},
            )
        bound = SEPARATOR.join(names)
    else:
        target = catalog.entities[steps[-1].target]
        (local,) = check_groupings(target, (g.model_copy(update={"field": last}),))
        bound = SEPARATOR.join((*names, local.field))
    return g if bound == g.field else g.model_copy(update={"field": bound})
