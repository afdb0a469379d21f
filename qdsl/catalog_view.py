"""A plain-data view of the catalog for `qdsl catalog` (sensitive names marked, never hidden)."""

from __future__ import annotations

from typing import Any

from qdsl.dsl.catalog import EVIDENCE_PROJECTION, Catalog, EntitySpec
from qdsl.dsl.errors import PlanError
from qdsl.dsl.suggest import did_you_mean, suggest


def _templates(catalog: Catalog) -> dict[str, list[str]]:
    from qdsl.executor.templates import registry

    out: dict[str, list[str]] = {}
    for template in registry(catalog).values():
        out.setdefault(template.entity_type, []).append(template.name)
    return {k: sorted(v) for k, v in out.items()}


def _entity(e: EntitySpec, templates: list[str]) -> dict[str, Any]:
    return {
        "table": e.table,
        "id": e.id,
        "label": e.label,
        "synonyms": list(e.synonyms),
        "names": dict(e.names),
        "query_types": [str(q) for q in e.query_types],
        "templates": templates,
        "projection": sorted(e.whitelisted | {EVIDENCE_PROJECTION}),
        "default_projection": list(e.default_projection),
        "sorts": list(e.sorts),
        "max_limit": e.max_limit,
        "default_limit": e.default_limit,
        "fields": {
            name: {
                "source": "fact" if f.is_fact else "column",
                "type": f.type.value,
                "operators": [o.value for o in f.operators],
                **({"values": list(f.values)} if f.values else {}),
                **({"aliases": {k: list(v) for k, v in f.aliases.items()}} if f.aliases else {}),
                **({"sensitive": True} if f.sensitive else {}),
            }
            for name, f in e.fields.items()
        },
    }


def describe_catalog(catalog: Catalog, entity: str | None = None) -> dict[str, Any]:
    templates = _templates(catalog)
    names = [entity] if entity else sorted(catalog.entities)
    if entity and entity not in catalog.entities:
        raise PlanError(
            "unknown_entity",
            f"the catalog has no entity {entity!r}",
            hint=did_you_mean(suggest(entity, catalog.entities), catalog.entities, "entities"),
            details={"entity": entity, "known": sorted(catalog.entities)},
        )
    scope = catalog.scope
    return {
        "source": catalog.source,
        "facts_table": catalog.facts.table,
        # what `project "<id>"` scopes each entity by (entities absent: not scoped)
        "scope": (
            {
                "entity": scope.entity,
                "fields": {
                    n: f for n in catalog.entities if (f := catalog.scope_field(n)) is not None
                },
            }
            if scope is not None
            else None
        ),
        "entities": {n: _entity(catalog.entities[n], templates.get(n, [])) for n in names},
    }
