"""The plan's JSON Schema narrowed to one catalog, for structured LLM output.

`qdsl.dsl.plan.schema.plan_json_schema` describes any plan; here the entity, field
and operator names become enums of the catalog at hand (sensitive fields left
out), so an API that constrains output to a schema cannot name a field the
catalog lacks. The normalizer still judges every plan: the schema narrows
what the model writes, it is not the check.
"""

from __future__ import annotations

from typing import Any

from qdsl.dsl.catalog import Catalog
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


def catalog_plan_schema(catalog: Catalog) -> dict[str, Any]:
    """The plan schema with the catalog's entity, field and operator names as enums."""
    schema = plan_json_schema()
    entities, fields, operators = _names(catalog)
    defs = schema["$defs"]
    props = schema["properties"]
    props["entity_type"] = {"title": "Entity Type", "type": "string", "enum": entities}
    field_enum = {"type": "string", "enum": fields}
    defs["Filter"]["properties"]["field"] = {"title": "Field", **field_enum}
    defs["Sort"]["properties"]["field"] = {"title": "Field", **field_enum}
    props["projection"]["items"] = dict(field_enum)
    if operators:
        known = set(defs["Operator"].get("enum", operators))
        defs["Operator"]["enum"] = [o for o in operators if o in known]
    schema["title"] = "qdsl plan for this catalog"
    return schema
