"""The plan's JSON Schema narrowed to one catalog, for structured LLM output.

`qdsl.dsl.plan.schema.plan_json_schema` describes any plan; here the entity, field
and operator names become enums of the catalog at hand (sensitive fields left
out; a breakdown's fields and grains those it may group by), so an API that
constrains output to a schema cannot name a field the catalog lacks. The
normalizer still judges every plan: the schema narrows what the model writes,
it is not the check.
"""

from __future__ import annotations

from typing import Any

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog.relations import MAX_HOPS
from qdsl.dsl.catalog.types import Cardinality
from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds.breakdown import groupable
from qdsl.dsl.plan.schema import plan_json_schema


def _names(catalog: Catalog) -> tuple[list[str], list[str], list[str]]:
    entities = sorted(catalog.entities)
    fields: set[str] = {"id"}
    operators: set[str] = set()
    for ent in catalog.entities.values():
        for name, spec in ent.fields.items():
            if spec.sensitive:
                continue
            fields.add(name)
            operators.update(o.value for o in spec.operators)
    return entities, sorted(fields), sorted(operators)


# A bound on the related names listed: a catalog with many relations keeps a schema
# of bounded size; the normalizer still binds any declared path the model writes.
MAX_RELATED_FIELDS = 400


def related_fields(catalog: Catalog, *, one_each: bool = False) -> list[str]:
    """`relation.field` and `relation.relation.field` names a filter may use: column
    fields, not sensitive, of the entity a declared path reaches (at most two hops),
    and the paths themselves (`payments is null`: no related row).
    `one_each`: only fields across many-to-one steps, the ones a projection may show."""
    out: set[str] = set()

    def reach(entity: str, prefix: tuple[str, ...]) -> None:
        for rname, step in catalog.relation_steps.get(entity, {}).items():
            if one_each and step.cardinality is not Cardinality.MANY_TO_ONE:
                continue
            path = (*prefix, rname)
            target = catalog.entities.get(step.target)
            if target is None:
                continue
            if not one_each:
                out.add(".".join(path))
            for fname, spec in target.fields.items():
                if not spec.sensitive and spec.column is not None:
                    out.add(".".join((*path, fname)))
            if len(path) < MAX_HOPS:
                reach(step.target, path)

    for name in catalog.entities:
        reach(name, ())
    return sorted(out)[:MAX_RELATED_FIELDS]


def _grouping(catalog: Catalog, schema: dict[str, Any]) -> None:
    """A breakdown's fields and grains: those of the entities that enable it (no
    grouping at all where none does: an empty enum is no schema every API takes)."""
    defs = schema["$defs"]
    fields: set[str] = set()
    grains: set[str] = set()
    for ent in catalog.entities.values():
        if QueryType.BREAKDOWN in ent.query_types:
            for name in groupable(ent):
                fields.add(name)
                grains.update(g.value for g in ent.fields[name].grains)
            related, related_grains = _related_groupings(catalog, ent.name)
            fields.update(related)
            grains.update(related_grains)
    if not fields:
        schema["properties"]["group_by"]["maxItems"] = 0
        return
    props = defs["Grouping"]["properties"]
    props["field"] = {
        "title": "Field",
        "description": "a column field of the entity to group by (a date field by a grain), "
        "a many-to-one relation (one group per related object) or `relation.field`",
        "type": "string",
        "enum": sorted(fields),
    }
    if grains:
        defs["Grain"]["enum"] = [g.value for g in Grain if g.value in grains]


def _related_groupings(catalog: Catalog, entity: str) -> tuple[list[str], set[str]]:
    """The groupings across many-to-one paths from `entity` (the related object, and
    its groupable fields), bounded like the related filter names; their grains."""
    out: list[str] = []
    grains: set[str] = set()

    def reach(here: str, prefix: tuple[str, ...]) -> None:
        for rname, step in catalog.relation_steps.get(here, {}).items():
            target = catalog.entities.get(step.target)
            if step.cardinality is not Cardinality.MANY_TO_ONE or target is None:
                continue
            path = (*prefix, rname)
            out.append(".".join(path))
            for fname in groupable(target):
                out.append(".".join((*path, fname)))
                grains.update(g.value for g in target.fields[fname].grains)
            if len(path) < MAX_HOPS:
                reach(step.target, path)

    reach(entity, ())
    return out[:MAX_RELATED_FIELDS], grains


def catalog_plan_schema(catalog: Catalog) -> dict[str, Any]:
    """The plan schema with the catalog's entity, field and operator names as enums."""
    schema = plan_json_schema()
    entities, fields, operators = _names(catalog)
    defs = schema["$defs"]
    props = schema["properties"]
    props["entity_type"] = {"title": "Entity Type", "type": "string", "enum": entities}
    field_enum = {"type": "string", "enum": fields}
    filter_enum = {"type": "string", "enum": sorted({*fields, *related_fields(catalog)})}
    defs["Filter"]["properties"]["field"] = {
        "title": "Field",
        "description": "a field of the entity, `relation.field` of a related entity, or "
        "`relation` alone with is_null (true: no related row; false: some related row)",
        **filter_enum,
    }
    defs["Sort"]["properties"]["field"] = {"title": "Field", **field_enum}
    shown = sorted({*fields, *related_fields(catalog, one_each=True)})
    props["projection"]["items"] = {"type": "string", "enum": shown}
    _grouping(catalog, schema)
    if operators:
        known = set(defs["Operator"].get("enum", operators))
        defs["Operator"]["enum"] = [o for o in operators if o in known]
    _narrow_measure(defs["Measure"]["properties"], catalog)
    schema["title"] = "qdsl plan for this catalog"
    return schema


def _narrow_measure(props: dict[str, Any], catalog: Catalog) -> None:
    """A measure's field is one some aggregation applies to, its name a declared one."""
    fields = sorted(
        {
            name
            for ent in catalog.entities.values()
            for name, spec in ent.fields.items()
            if spec.aggregations and not spec.sensitive
        }
    )
    names = sorted({name for ent in catalog.entities.values() for name in ent.measures})
    for key, allowed in (("field", fields), ("name", names)):
        choice: dict[str, Any] = {"type": "string", "enum": allowed} if allowed else {}
        props[key] = {
            "title": key.title(),
            "anyOf": [choice, {"type": "null"}] if choice else [{"type": "null"}],
            "default": None,
        }
