"""The tools' input and output schemas.

Inputs are pydantic models (validation and the advertised JSON Schema come
from one place); a `plan` argument is plan text or the JSON plan, whose schema
is `qdsl schema`'s (`qdsl.dsl.plan.schema.plan_json_schema`), embedded whole. No
model has a tenant field, and none accepts unknown fields: a model that adds
`tenant` to its arguments is refused, never obeyed.

Every tool's output is an envelope (docs/envelopes.md): `ENVELOPE_SCHEMA` is
its `outputSchema`, the same for all six tools.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdsl.dsl.plan.schema import plan_json_schema

_PLAN_TEXT = (
    "The plan: plan text (docs/plan-language.md), or the JSON plan as an object "
    "(or as a string starting with `{`). Leave out scope.tenant_id: the tenant is the server's."
)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskInput(_Input):
    question: str = Field(
        min_length=1,
        description="The question, in the user's words (any language the catalog knows).",
    )


class RunPlanInput(_Input):
    plan: str | dict[str, Any] = Field(description=_PLAN_TEXT)


class CompilePlanInput(_Input):
    plan: str | dict[str, Any] = Field(description=_PLAN_TEXT)
    dialect: Literal["postgresql", "sqlite"] = Field(
        default="postgresql", description="The SQL dialect to render."
    )


class DescribeCatalogInput(_Input):
    entity: str | None = Field(
        default=None, description="One entity to describe (default: every entity)."
    )


class PlanSchemaInput(_Input):
    pass


class GetRefInput(_Input):
    ref_id: str = Field(
        min_length=1, description="The refId of a stored result (a large result's `refId`)."
    )
    expr: str = Field(
        default="data",
        min_length=1,
        description="A JMESPath expression over the stored envelope, e.g. `data.answer.items[0]` "
        "or `length(data.answer.items)` (default `data`).",
    )


def input_schema(model: type[_Input]) -> dict[str, Any]:
    """The model's JSON Schema, with a `plan` property typed by the plan's own schema."""
    schema = model.model_json_schema()
    plan = schema.get("properties", {}).get("plan")
    if plan is None:
        return schema
    plan_schema = copy.deepcopy(_plan_schema())
    defs = plan_schema.pop("$defs", {})
    plan_schema.pop("$schema", None)
    schema.setdefault("$defs", {}).update(defs)
    schema["$defs"]["Plan"] = plan_schema
    schema["properties"]["plan"] = {
        "description": plan["description"],
        "anyOf": [{"type": "string", "minLength": 1}, {"$ref": "#/$defs/Plan"}],
    }
    return schema


@functools.cache
def _plan_schema() -> dict[str, Any]:
    return plan_json_schema()


_HINT = {
    "type": "object",
    "description": "A suggested next call: `tool` with ready `arguments` (from meta.next).",
    "properties": {
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
        "why": {"type": "string"},
    },
    "required": ["tool", "arguments"],
}

ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A qdsl envelope (docs/envelopes.md). A result over the output budget "
    "starts with `refId` and carries a compacted preview of `data` of the same shape; the "
    "full result is the resource qdsl://refs/<refId> (or `get_ref`).",
    "properties": {
        "refId": {"type": ["string", "null"]},
        "resultPersisted": {"type": "boolean"},
        "outputBytes": {"type": "integer"},
        "sha256": {"type": "string"},
        "expiresAt": {"type": ["string", "null"]},
        "previewTruncated": {"type": "boolean"},
        "largeOutputNotice": {"type": "string"},
        "degraded": {"type": "boolean"},
        "schemaVersion": {"const": 1},
        "ok": {"const": True},
        "operation": {"type": "string"},
        "data": {"description": "The result (null only in a minimal large-result envelope)."},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "meta": {
            "type": "object",
            "properties": {
                "traceId": {"type": "string"},
                "next": {"type": "array", "items": _HINT},
                "preview": {"type": "object"},
            },
        },
    },
    "required": ["schemaVersion", "ok", "operation", "data", "warnings", "meta"],
}
