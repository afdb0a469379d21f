"""The LLM planner: a caller-supplied `complete(prompt) -> str` and a repair loop.

Each output is parsed and normalized at once; a typed error goes back to the
model with its code, message and hint. Attempts are bounded and recorded;
giving up raises `PlanError("planner_gave_up")` carrying every attempt.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PlanError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.load import load_plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.planner.base import Attempt, PlanDraft
from qdsl.planner.prompt import PlanForm, build_prompt, repair_prompt

Complete = Callable[[str], str]
Validate = Callable[[str, Catalog, PlanContext | None], Plan]

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def extract_plan(output: str) -> str:
    """The plan inside a model's reply: code fences and surrounding blank lines dropped."""
    m = _FENCE.match(output)
    return (m.group(1) if m else output).strip()


def validate_plan(text: str, catalog: Catalog, context: PlanContext | None) -> Plan:
    return normalize(load_plan(text), catalog, context).plan


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
        self.form: PlanForm = form
        self.max_attempts = max_attempts
        self.validate = validate

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        base = build_prompt(question, catalog, form=self.form, context=context, feedback=feedback)
        prompt = base
        attempts: list[Attempt] = []
        for number in range(1, self.max_attempts + 1):
            raw = self.complete(prompt)
            text = extract_plan(raw)
            try:
                self.validate(text, catalog, context)
            except QdslError as exc:
                attempts.append(Attempt(number, text, exc.code, exc.message))
                prompt = repair_prompt(base, text, exc.code, exc.message, exc.hint)
                continue
            attempts.append(Attempt(number, text))
            return PlanDraft(text=text, planner=self.name, attempts=tuple(attempts))
        last = attempts[-1]
        raise PlanError(
            "planner_gave_up",
            f"the LLM planner wrote no valid plan in {len(attempts)} attempts "
            f"(last error {last.error_code})",
            hint="rephrase the question, or use the rule planner",
            details={
                "attempts": [
                    {"number": a.number, "error_code": a.error_code, "message": a.error_message}
                    for a in attempts
                ]
            },
        )
