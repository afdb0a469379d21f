"""The OpenAI-compatible chat completions API as an `LLMPlanner` completion.

Structured output is `response_format={"type": "json_schema", ...}` with the
catalog's plan schema, non-strict: strict mode demands every property be
required, which the plan's defaults are not (the normalizer judges the plan
either way). Many servers and local runtimes speak this API; pass their
`base_url` to the `openai.OpenAI` client.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion

from qdsl.dsl.errors import PlanError
from qdsl.planner.adapters import SCHEMA_NAME, SYSTEM, refused, unavailable
from qdsl.planner.llm import Reply


def _request(
    model: str, prompt: str, schema: dict[str, Any] | None, max_tokens: int | None
) -> dict[str, Any]:
    req: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ],
        "temperature": 0,
    }
    if max_tokens is not None:
        req["max_tokens"] = max_tokens
    if schema is not None:
        req["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": False},
        }
    return req


def _reply(resp: ChatCompletion) -> Reply:
    text = ""
    if resp.choices:
        text = resp.choices[0].message.content or ""
    usage = resp.usage
    return Reply(
        text=text,
        input_tokens=usage.prompt_tokens if usage else None,
        output_tokens=usage.completion_tokens if usage else None,
    )


def _typed(exc: openai.APIError) -> PlanError:
    if isinstance(exc, openai.APITimeoutError):
        return unavailable("timeout", str(exc))
    if isinstance(exc, openai.APIConnectionError):
        return unavailable("connection", str(exc))
    if isinstance(exc, openai.RateLimitError):
        return unavailable("rate_limited", str(exc))
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return unavailable(f"http_{exc.status_code}", str(exc))
    if isinstance(exc, openai.APIStatusError):
        return refused(f"http_{exc.status_code}", str(exc))
    return refused(type(exc).__name__, str(exc))


class OpenAIChat:
    """A sync completion over `openai.OpenAI` (its timeout and max_retries apply)."""

    def __init__(self, client: openai.OpenAI, model: str, *, max_tokens: int | None = None):
        self.client, self.model, self.max_tokens = client, model, max_tokens

    def __call__(self, prompt: str, *, schema: dict[str, Any] | None = None) -> Reply:
        try:
            resp = self.client.chat.completions.create(
                **_request(self.model, prompt, schema, self.max_tokens)
            )
        except openai.APIError as exc:
            raise _typed(exc) from exc
        return _reply(resp)


class AsyncOpenAIChat:
    """An async completion over `openai.AsyncOpenAI`."""

    def __init__(self, client: openai.AsyncOpenAI, model: str, *, max_tokens: int | None = None):
        self.client, self.model, self.max_tokens = client, model, max_tokens

    async def __call__(self, prompt: str, *, schema: dict[str, Any] | None = None) -> Reply:
        try:
            resp = await self.client.chat.completions.create(
                **_request(self.model, prompt, schema, self.max_tokens)
            )
        except openai.APIError as exc:
            raise _typed(exc) from exc
        return _reply(resp)
