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
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PlanError, PolicyError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.load import load_plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.planner.base import Attempt, PlanDraft
from qdsl.planner.prompt import PlanForm, build_prompt, repair_prompt

SyncComplete = Callable[[str], str]
AsyncComplete = Callable[[str], Awaitable[str]]
Complete = SyncComplete | AsyncComplete
Validate = Callable[[str, Catalog, PlanContext | None], Plan]
# The repair loop: yields prompts, is sent replies, returns the accepted draft.
Loop = Generator[str, str, PlanDraft]

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def extract_plan(output: str) -> str:
    """The plan inside a model's reply: code fences and surrounding blank lines dropped."""
    m = _FENCE.match(output)
    return (m.group(1) if m else output).strip()


def validate_plan(text: str, catalog: Catalog, context: PlanContext | None) -> Plan:
    return normalize(load_plan(text), catalog, context).plan


def is_async_callable(fn: object) -> bool:
    """An `async def` function, or an object whose `__call__` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - the bound method is inspected
    return call is not None and inspect.iscoroutinefunction(call)


def _as_text(reply: object) -> str:
    # A reply that is not text (None, a dict, bytes) is a bad plan, not a crash.
    return reply if isinstance(reply, str) else ""


def _attempts_detail(attempts: list[Attempt]) -> list[dict[str, Any]]:
    return [
        {"number": a.number, "error_code": a.error_code, "message": a.error_message}
        for a in attempts
    ]


class LLMPlanner:
    name = "llm"

    def __init__(
        self,
        complete: Complete,
        *,
        form: PlanForm = "text",
        max_attempts: int = 3,
        validate: Validate = validate_plan,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.complete = complete
        self.is_async = is_async_callable(complete)
        self.form: PlanForm = form
        self.max_attempts = max_attempts
        self.validate = validate

    def _loop(
        self,
        question: str,
        catalog: Catalog,
        context: PlanContext | None,
        feedback: str | None,
    ) -> Loop:
        base = build_prompt(question, catalog, form=self.form, context=context, feedback=feedback)
        prompt = base
        attempts: list[Attempt] = []
        for number in range(1, self.max_attempts + 1):
            text = extract_plan((yield prompt))
            try:
                self.validate(text, catalog, context)
            except PolicyError as exc:
                attempts.append(Attempt(number, text, exc.code, exc.message))
                exc.details.setdefault("attempts", _attempts_detail(attempts))
                raise
            except QdslError as exc:
                attempts.append(Attempt(number, text, exc.code, exc.message))
                prompt = repair_prompt(base, text, exc)
                continue
            attempts.append(Attempt(number, text))
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
        if self.is_async:
            coro = self.aplan(question, catalog=catalog, context=context, feedback=feedback)
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(coro)
            # Called from inside a running loop: a fresh loop in a worker thread.
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(asyncio.run, coro).result()
        loop = self._loop(question, catalog, context, feedback)
        prompt = next(loop)
        while True:
            try:
                prompt = loop.send(_as_text(self.complete(prompt)))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    async def aplan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        """Plan on asyncio: await an async completion, thread a sync one off the loop."""
        loop = self._loop(question, catalog, context, feedback)
        prompt = next(loop)
        while True:
            if self.is_async:
                reply: object = await self.complete(prompt)  # type: ignore[misc]
            else:
                reply = await asyncio.to_thread(self.complete, prompt)
            try:
                prompt = loop.send(_as_text(reply))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
