"""The LLM planner: a caller-supplied completion and a repair loop.

The completion is `complete(prompt) -> str`, sync or `async def` (told apart
by inspection, never configured). The loop itself is one generator shared by
`plan` and `aplan`: it yields each prompt and receives the model's reply, so
both run the same steps; `aplan` awaits an async completion and runs a sync
one in a worker thread, never on the event loop.

Each output is parsed and normalized at once; a typed error goes back to the
model with its code, message, hint and position. Attempts are bounded and
recorded; giving up raises `PlanError("planner_gave_up")` carrying every
attempt. A policy error (another tenant, a sensitive field) is not the
model's typo: it ends the loop at once as that error, never repaired into
compliance behind the caller's back.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PlanError, PolicyError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.planner.adapters import unavailable
from qdsl.planner.base import Attempt, PlanDraft, Planner
from qdsl.planner.prompt import PlanForm, build_prompt, repair_prompt
from qdsl.planner.slice import bounded_catalog_text

SyncComplete = Callable[[str], str]
AsyncComplete = Callable[[str], Awaitable[str]]
Complete = SyncComplete | AsyncComplete
Validate = Callable[[str, Catalog, PlanContext | None], Plan]
# The repair loop: yields prompts, is sent (reply, elapsed ms), returns the accepted draft.
Loop = Generator[str, tuple[object, float], PlanDraft]

# The first prompt's default budget in approximate tokens: a small catalog fits whole.
DEFAULT_PROMPT_BUDGET = 4000

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def extract_plan(output: str) -> str:
    """The plan inside a model's reply: code fences and surrounding blank lines dropped."""
    m = _FENCE.match(output)
    return (m.group(1) if m else output).strip()


def validate_plan(text: str, catalog: Catalog, context: PlanContext | None) -> Plan:
    return compile_source(text, catalog, context).plan


def is_async_callable(fn: object) -> bool:
    """An `async def` function, or an object whose `__call__` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - the bound method is inspected
    return call is not None and inspect.iscoroutinefunction(call)


@dataclass(frozen=True)
class Reply:
    """What an adapter returns: the text and, when the API reports them, token counts."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


def accepts_schema(fn: object) -> bool:
    """Whether a completion takes the plan's JSON Schema (a `schema` keyword)."""
    try:
        params = inspect.signature(fn).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return "schema" in params


def _as_text(reply: object) -> str:
    # A reply that is not text (None, a dict, bytes) is a bad plan, not a crash.
    if isinstance(reply, Reply):
        return reply.text
    return reply if isinstance(reply, str) else ""


def _attempts_detail(attempts: list[Attempt]) -> list[dict[str, Any]]:
    return [
        {"number": a.number, "error_code": a.error_code, "message": a.error_message} | a.cost()
        for a in attempts
    ]


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


class LLMPlanner:
    name = "llm"

    def __init__(
        self,
        complete: Complete,
        *,
        form: PlanForm | None = None,
        max_attempts: int = 3,
        validate: Validate = validate_plan,
        fallback: Planner | None = None,
        prompt_budget: int | None = DEFAULT_PROMPT_BUDGET,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.complete = complete
        self.is_async = is_async_callable(complete)
        # A completion that takes the schema writes JSON plans unless told otherwise.
        self.structured = accepts_schema(complete)
        self.form: PlanForm = form or ("json" if self.structured else "text")
        self.max_attempts = max_attempts
        self.validate = validate
        # Used only when the LLM API is unavailable, and named in the draft.
        self.fallback = fallback
        # Approximate tokens (bytes / 4) the first prompt may take; None: the full catalog.
        self.prompt_budget = prompt_budget

    def _schema(self, catalog: Catalog) -> dict[str, Any] | None:
        if not self.structured or self.form != "json":
            return None
        from qdsl.planner.schema import catalog_plan_schema

        return catalog_plan_schema(catalog)

    def _call(self, prompt: str, schema: dict[str, Any] | None) -> Any:
        complete: Any = self.complete
        try:
            return complete(prompt) if schema is None else complete(prompt, schema=schema)
        except (TimeoutError, ConnectionError) as exc:
            # A bare completion's network failure: as retryable as an adapter's.
            raise unavailable(type(exc).__name__, str(exc)) from exc

    async def _acall(self, prompt: str, schema: dict[str, Any] | None) -> Any:
        try:
            return await self._call(prompt, schema)
        except (TimeoutError, ConnectionError) as exc:
            raise unavailable(type(exc).__name__, str(exc)) from exc

    def _fall_back(
        self,
        exc: PlanError,
        question: str,
        catalog: Catalog,
        context: PlanContext | None,
        feedback: str | None,
    ) -> PlanDraft:
        if self.fallback is None or exc.code != "validation/llm_unavailable":
            raise exc
        draft = self.fallback.plan(question, catalog=catalog, context=context, feedback=feedback)
        note = f"the LLM was unavailable ({exc.message}); planned by {draft.planner}"
        return replace(draft, notes=(*draft.notes, note))

    def first_prompt(
        self,
        question: str,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> str:
        """The first prompt: the catalog bounded to `prompt_budget` when one is set."""
        attached = self.structured and self.form == "json"

        def render(catalog_text: str | None) -> str:
            return build_prompt(
                question,
                catalog,
                form=self.form,
                context=context,
                feedback=feedback,
                catalog_text=catalog_text,
                schema_attached=attached,
            )

        if self.prompt_budget is None:
            return render(None)
        text = bounded_catalog_text(
            question, catalog, render, budget_tokens=self.prompt_budget, context=context
        )
        return render(text)

    def _loop(
        self,
        question: str,
        catalog: Catalog,
        context: PlanContext | None,
        feedback: str | None,
    ) -> Loop:
        base = self.first_prompt(question, catalog, context, feedback)
        prompt = base
        attempts: list[Attempt] = []
        for number in range(1, self.max_attempts + 1):
            reply, elapsed_ms = yield prompt
            text = extract_plan(_as_text(reply))
            cost: dict[str, Any] = {"elapsed_ms": elapsed_ms, "prompt_chars": len(prompt)}
            if isinstance(reply, Reply):
                cost.update(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
            try:
                self.validate(text, catalog, context)
            except PolicyError as exc:
                attempts.append(Attempt(number, text, exc.code, exc.message, **cost))
                exc.details.setdefault("attempts", _attempts_detail(attempts))
                raise
            except QdslError as exc:
                attempts.append(Attempt(number, text, exc.code, exc.message, **cost))
                prompt = repair_prompt(base, text, exc)
                continue
            attempts.append(Attempt(number, text, **cost))
            return PlanDraft(text=text, planner=self.name, attempts=tuple(attempts))
        last = attempts[-1]
        raise PlanError(
            "planner_gave_up",
            f"the LLM planner wrote no valid plan in {len(attempts)} attempts "
            f"(last error {last.error_code})",
            hint="rephrase the question, or use the rule planner",
            details={"attempts": _attempts_detail(attempts)},
        )

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        """Plan synchronously; an async completion runs on a private event loop."""
        try:
            return self._plan(question, catalog=catalog, context=context, feedback=feedback)
        except PlanError as exc:
            return self._fall_back(exc, question, catalog, context, feedback)

    async def aplan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        """Plan on asyncio: await an async completion, thread a sync one off the loop."""
        try:
            return await self._aplan(question, catalog=catalog, context=context, feedback=feedback)
        except PlanError as exc:
            return self._fall_back(exc, question, catalog, context, feedback)

    def _plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        if self.is_async:
            coro = self._aplan(question, catalog=catalog, context=context, feedback=feedback)
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(coro)
            # Called from inside a running loop: a fresh loop in a worker thread.
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(asyncio.run, coro).result()
        loop = self._loop(question, catalog, context, feedback)
        schema = self._schema(catalog)
        prompt = next(loop)
        while True:
            started = time.perf_counter()
            reply = self._call(prompt, schema)
            try:
                prompt = loop.send((reply, _ms(started)))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    async def _aplan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        loop = self._loop(question, catalog, context, feedback)
        schema = self._schema(catalog)
        prompt = next(loop)
        while True:
            started = time.perf_counter()
            if self.is_async:
                reply: object = await self._acall(prompt, schema)
            else:
                reply = await asyncio.to_thread(self._call, prompt, schema)
            try:
                prompt = loop.send((reply, _ms(started)))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
