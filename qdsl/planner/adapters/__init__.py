"""Completions for `LLMPlanner` over the official LLM SDKs (optional extras).

`qdsl.planner.adapters.openai_chat` speaks the OpenAI-compatible chat API
(`pip install 'qdsl-verified[openai]'`), `qdsl.planner.adapters.anthropic_messages` the
Anthropic messages API (`pip install 'qdsl-verified[anthropic]'`). Each comes as a sync
and an async class over the SDK's sync or async client; each takes the plan's
JSON Schema and returns a `Reply` with the API's token counts. Transient
failures are retried by the SDK itself (its `max_retries`: exponential backoff
with jitter, honouring Retry-After); what still fails is a typed, retryable
`PlanError("llm_unavailable")`.
"""

from __future__ import annotations

from qdsl.dsl.errors import PlanError

PLAN_TOOL = "write_plan"
SCHEMA_NAME = "qdsl_plan"
SYSTEM = "You write Query DSL plans for a data question answering system. Reply with the plan only."


def unavailable(kind: str, detail: str) -> PlanError:
    """The LLM API failed after the SDK's own retries: retryable, never a guess."""
    return PlanError(
        "llm_unavailable",
        f"the LLM API failed ({kind}): {detail}"[:500],
        hint="retry later; the question was not answered",
        retryable=True,
        details={"llm_error": kind},
    )


def refused(kind: str, detail: str) -> PlanError:
    """The LLM API refused the request itself (bad key, bad model): not retryable."""
    return PlanError(
        "llm_request_refused",
        f"the LLM API refused the request ({kind}): {detail}"[:500],
        hint="check the adapter's model, key and base URL",
        retryable=False,
        details={"llm_error": kind},
    )
