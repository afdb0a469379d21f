"""`[scope]`: what a plan's project scope names (docs/catalog.md, "Scope").

The catalog says which entity a scope id is an id of; each other entity is
scoped by its one id column field that `references` that entity. Checked
when the catalog loads, with the catalog's other problems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog, EntitySpec


class ScopeSpec(BaseModel):
    """What a plan's project scope (`scope.project_id`, text `project "64"`) names.

    `entity` is the entity a scope id is an id of; a plan over that entity is
    scoped by its id, a plan over another entity by its one id column field
    that `references` it (`fields` picks the field of an entity having several).
    An entity with neither cannot be scoped (`not_covered/scope_not_covered`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity: str
    fields: dict[str, str] = Field(default_factory=dict)


def scope_fields(catalog: Catalog) -> dict[str, str]:
    """Entity -> the name (a field, or its id) a project scope filters it on."""
    scope = catalog.scope
    out: dict[str, str] = {}
    if scope is None:
        return out
    for name, ent in catalog.entities.items():
        if name == scope.entity:
            out[name] = ent.id
        elif name in scope.fields:
            out[name] = scope.fields[name]
        else:
            found = referencing(ent, scope.entity)
            if len(found) == 1:
                out[name] = found[0]
    return out


def referencing(ent: EntitySpec, target: str) -> list[str]:
    """The id column fields of `ent` that reference the entity `target` (ids
    compare as they are written, as the scope's id is bound)."""
    from qdsl.dsl.catalog import FieldType  # catalog imports this module

    return [
        n
        for n, f in ent.fields.items()
        if f.references == target and f.column is not None and f.type is FieldType.ID
    ]


def check_scope(catalog: Catalog) -> list[tuple[str, str]]:
    """The scope's entity exists; each scoped entity's field is a plain column
    referencing it; no entity leaves the choice between two fields open."""
    scope = catalog.scope
    if scope is None:
        return []
    if scope.entity not in catalog.entities:
        return [("scope.entity", f"no entity `{scope.entity}`")]
    out: list[tuple[str, str]] = []
    for ename, fname in scope.fields.items():
        key = f"scope.fields.{ename}"
        ent = catalog.entities.get(ename)
        if ent is None:
            out.append((key, f"no entity `{ename}`"))
        elif ename == scope.entity:
            out.append((key, f"`{ename}` is the scope's entity: it is scoped by its id"))
        elif fname not in referencing(ent, scope.entity):
            out.append((key, f"`{fname}` is not an id column field referencing `{scope.entity}`"))
    for ename, ent in catalog.entities.items():
        found = referencing(ent, scope.entity)
        if ename != scope.entity and len(found) > 1 and ename not in scope.fields:
            out.append(
                (
                    f"scope.fields.{ename}",
                    f"`{ename}` references `{scope.entity}` by {', '.join(found)}: name one",
                )
            )
    for ename, fname in scope_fields(catalog).items():
        if fname in catalog.entities[ename].sensitive:
            out.append((f"scope.fields.{ename}", f"`{fname}` is sensitive and cannot scope"))
    return out
