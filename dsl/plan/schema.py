"""JSON Schema of the JSON plan form, for LLM structured output (``qdsl schema``).

Generated from the IR models so it cannot drift from what ``parse_json``
accepts; spans (provenance of parsed text) are left out, and enums list only
canonical members (the closure's synonyms are a courtesy, not the contract).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from qdsl.dsl.ir import Plan
from qdsl.dsl.operators import value_shapes

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _strip_spans(node: Any) -> None:
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and "span" in properties:
            del properties["span"]
            required = node.get("required")
            if isinstance(required, list) and "span" in required:
                required.remove("span")
        for value in node.values():
            _strip_spans(value)
    elif isinstance(node, list):
        for value in node:
            _strip_spans(value)


@functools.cache
def _schema() -> dict[str, Any]:
    schema = Plan.model_json_schema(mode="validation")
    _strip_spans(schema)
    schema.get("$defs", {}).pop("Span", None)
    value = schema["$defs"]["Filter"]["properties"]["value"]
    value["description"] = value_shapes()
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "qdsl plan"
    schema["description"] = (
        "A Query DSL plan (docs/plan-language.md). The tenant is bound from the caller's context; "
        "scope.tenant_bound is always true."
    )
    return schema


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a plan (a fresh copy the caller may change)."""
    return copy.deepcopy(_schema())
