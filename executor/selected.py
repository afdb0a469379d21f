"""The columns a plan's entity rows carry: the projection (with a related
entity's fields through many-to-one relations, `customer.city`), a snapshot's
every column field, an explanation's passages and the scope field."""

from __future__ import annotations

from dataclasses import dataclass

from qdsl.dsl.bound import BoundScope
from qdsl.dsl.catalog import EVIDENCE_PROJECTION, Catalog, FieldType
from qdsl.dsl.catalog.relations import RelationStep, relation_path
from qdsl.dsl.ir import Plan
from qdsl.executor.tables import EntityTable, entity_table
from qdsl.executor.templates import Template


@dataclass(frozen=True)
class Selected:
    """A column of the entity rows: the name in results and the column read."""

    name: str
    column: str
    # a related entity's column (`customer.city`): the many-to-one steps to it and
    # the column's type there; empty for the entity's own columns
    path: tuple[RelationStep, ...] = ()
    kind: FieldType | None = None


def selected_columns(
    plan: Plan,
    catalog: Catalog,
    et: EntityTable,
    template: Template,
    scope: BoundScope | None = None,
) -> tuple[Selected, ...]:
    spec = et.spec
    names: list[str] = list(plan.projection or spec.default_projection)
    if template.shape.snapshot:
        names += [n for n, f in spec.fields.items() if f.column and not f.sensitive]
    if template.shape.passages:
        names += list(spec.text_search)
        if spec.passage_section is not None:
            names.append(spec.passage_section)
    if scope is not None and scope.field != spec.id:
        # each row shows the scope it is in, so the verifier can check it (within_scope)
        names.append(scope.field)
    out: dict[str, Selected] = {}
    for name in names:
        if name == EVIDENCE_PROJECTION:
            continue
        if "." in name:  # bound by the normalizer: relation names, then a column field
            *relations, last = name.split(".")
            steps = relation_path(catalog, spec.name, relations)
            target = entity_table(catalog, steps[-1].target)
            column = target.spec.column_for(last)
            if column is not None:
                out.setdefault(name, Selected(name, column, steps, target.kinds.get(column)))
            continue
        bound = spec.names.get(name, name)
        column = spec.column_for(bound)
        if column is None or bound in spec.sensitive or column in spec.sensitive:
            continue
        out.setdefault(bound, Selected(bound, column))
    return tuple(out.values())
