"""An envelope as a tool result: `structuredContent`, a short text, a resource link.

Results are built in their wire form (the dict the SDK puts under `result`),
the envelope itself as `structuredContent`: the SDK checks a handler's dict
against the protocol's `CallToolResult` before it goes out, so building a
pydantic `CallToolResult` first would only be dumped again (a walk over the
whole envelope per call). The keys come in the order the SDK's own dump gives
them.

`meta.next` holds the CLI's suggestions (argv to run, a chain step); over MCP
each becomes a tool-call hint `{"tool", "arguments", "why"}` the model can
send as is. Tenants are dropped from the arguments: no tool takes one.
A stored result also gets a `resource_link` content block to its resource.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from qdsl.mcp.resources import MIME, ref_uri

_TEXT_CHARS = 1000


def tool_hint(op: dict[str, Any]) -> dict[str, Any] | None:
    """A `meta.next` suggestion as a call of one of the tools, if one does it."""
    step = op.get("input") if isinstance(op.get("input"), dict) else {}
    assert isinstance(step, dict)
    operation = op.get("operation")
    hint: dict[str, Any] | None = None
    if operation == "run" and "plan" in step:
        hint = {"tool": "run_plan", "arguments": {"plan": step["plan"]}}
    elif operation == "refs get" and isinstance(step.get("ref"), str):
        hint = {
            "tool": "get_ref",
            "arguments": {"ref_id": step["ref"], "expr": step.get("expr") or "data"},
        }
    if hint is not None and op.get("why"):
        hint["why"] = str(op["why"])
    return hint


def with_tool_hints(env: dict[str, Any]) -> dict[str, Any]:
    meta = env.get("meta")
    if not isinstance(meta, dict):
        return env
    hints = [h for op in meta.get("next", []) if isinstance(op, dict) for h in [tool_hint(op)] if h]
    return {**env, "meta": {**meta, "next": hints}}


def summary(env: dict[str, Any]) -> str:
    """The short text block: what a model reads first, and what a host shows."""
    data = env.get("data")
    lines: list[str] = []
    if env.get("refId"):
        lines.append(
            f"The full result ({env.get('outputBytes')} bytes) is stored as ref "
            f"{env['refId']} ({ref_uri(str(env['refId']))}); below is a compacted preview. "
            "Read parts of it with get_ref (a JMESPath `expr`) or the whole with resources/read."
        )
    elif env.get("resultPersisted") is False:
        lines.append(str(env.get("largeOutputNotice") or "the result could not be stored"))
    if isinstance(data, dict) and isinstance(data.get("text"), str) and "status" in data:
        lines.append(f"[{data['status']}] {data['text']}")
    elif data is not None:
        lines.append(f"{env.get('operation')}: " + json.dumps(data, ensure_ascii=False)[:200])
    for hint in env.get("meta", {}).get("next", [])[:3]:
        args = json.dumps(hint["arguments"], ensure_ascii=False)
        why = f" ({hint['why']})" if "why" in hint else ""
        lines.append(f"next: {hint['tool']} {args}{why}")
    text = "\n".join(lines)
    return text if len(text) <= _TEXT_CHARS else text[: _TEXT_CHARS - 1] + "…"


Wire = dict[str, Any]


def _dumped(block: types.ContentBlock) -> Wire:
    # keys sorted: the SDK's per-version wire models list their fields so
    return dict(sorted(block.model_dump(by_alias=True, mode="json", exclude_none=True).items()))


def wire_result(content: list[types.ContentBlock], structured: Wire, *, is_error: bool) -> Wire:
    """A `CallToolResult` as the SDK sends it (its fields in its order, none null)."""
    return {
        "content": [_dumped(block) for block in content],
        "isError": is_error,
        "structuredContent": structured,
    }


def tool_result(env: dict[str, Any]) -> Wire:
    env = with_tool_hints(env)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=summary(env))]
    ref_id = env.get("refId")
    if isinstance(ref_id, str) and env.get("resultPersisted"):
        content.append(
            types.ResourceLink(
                type="resource_link",
                uri=ref_uri(ref_id),
                name=ref_id,
                description=f"the full {env.get('operation')} result "
                f"(expires {env.get('expiresAt')})",
                mime_type=MIME,
                size=env.get("outputBytes"),
            )
        )
    return wire_result(content, env, is_error=False)
