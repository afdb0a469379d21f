"""The Anthropic messages API as an `LLMPlanner` completion.

Structured output is one tool whose `input_schema` is the catalog's plan
schema, forced with `tool_choice`; the tool call's input is the JSON plan.
Without a schema the reply's text blocks are the plan.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic.types import Message

from qdsl.dsl.errors import PlanError
from qdsl.planner.adapters import PLAN_TOOL, SYSTEM, refused, unavailable
from qdsl.planner.llm import Reply


def _request(
    model: str, prompt: str, schema: dict[str, Any] | None, max_tokens: int
) -> dict[str, Any]:
    req: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": prompt}],
    }
    if schema is not None:
        req["tools"] = [
            {
                "name": PLAN_TOOL,
                "description": "Write the Query DSL plan for the question.",
                "input_schema": schema,
            }
        ]
        req["tool_choice"] = {"type": "tool", "name": PLAN_TOOL}
    return req


def _reply(msg: Message) -> Reply:
    tool = next((b for b in msg.content if b.type == "tool_use"), None)
    if tool is not None:
        text = json.dumps(tool.input, ensure_ascii=False)
    else:
        text = "".join(b.text for b in msg.content if b.type == "text")
    return Reply(
        text=text,
        input_tokens=msg.usage.input_tokens,
        output_tokens=msg.usage.output_tokens,
    )


def _typed(exc: anthropic.APIError) -> PlanError:
    if isinstance(exc, anthropic.APITimeoutError):
        return unavailable("timeout", str(exc))
    if isinstance(exc, anthropic.APIConnectionError):
        return unavailable("connection", str(exc))
    if isinstance(exc, anthropic.RateLimitError):
        return unavailable("rate_limited", str(exc))
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code >= 500:
        return unavailable(f"http_{exc.status_code}", str(exc))
    if isinstance(exc, anthropic.APIStatusError):
        return refused(f"http_{exc.status_code}", str(exc))
    return refused(type(exc).__name__, str(exc))


class AnthropicMessages:
    """A sync completion over `anthropic.Anthropic` (its timeout and max_retries apply)."""

    def __init__(self, client: anthropic.Anthropic, model: str, *, max_tokens: int = 1024):
        self.client, self.model, self.max_tokens = client, model, max_tokens

    def __call__(self, prompt: str, *, schema: dict[str, Any] | None = None) -> Reply:
        try:
            msg = self.client.messages.create(
                **_request(self.model, prompt, schema, self.max_tokens)
            )
        except anthropic.APIError as exc:
            raise _typed(exc) from exc
        return _reply(msg)


class AsyncAnthropicMessages:
    """An async completion over `anthropic.AsyncAnthropic`."""

    def __init__(self, client: anthropic.AsyncAnthropic, model: str, *, max_tokens: int = 1024):
        self.client, self.model, self.max_tokens = client, model, max_tokens

    async def __call__(self, prompt: str, *, schema: dict[str, Any] | None = None) -> Reply:
        try:
            msg = await self.client.messages.create(
                **_request(self.model, prompt, schema, self.max_tokens)
            )
        except anthropic.APIError as exc:
            raise _typed(exc) from exc
        return _reply(msg)
