"""The planner Protocol: a question in, plan TEXT out (never SQL, never an answer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext


@dataclass(frozen=True)
class Attempt:
    """One try of a planner: what it produced and, if it failed, the typed error."""

    number: int
    output: str
    error_code: str | None = None
    error_message: str | None = None
    # What the attempt cost, when the planner measures it (the LLM planner does).
    elapsed_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    prompt_chars: int | None = None

    def cost(self) -> dict[str, float | int]:
        """The measured costs, for the trace and the audit event (unmeasured left out)."""
        pairs = {
            "elapsed_ms": self.elapsed_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "prompt_chars": self.prompt_chars,
        }
        return {k: v for k, v in pairs.items() if v is not None}

    @property
    def ok(self) -> bool:
        return self.error_code is None


@dataclass(frozen=True)
class PlanDraft:
    """A plan in text (or JSON) form, as the planner wrote it; the normalizer judges it."""

    text: str
    planner: str
    attempts: tuple[Attempt, ...] = ()
    notes: tuple[str, ...] = ()


@runtime_checkable
class Planner(Protocol):
    """Anything that turns a question into plan text.

    `feedback` carries why the previous plan was refused (a verifier issue or a
    normalizer error), so a planner that can take advice may write a better one.
    """

    name: str

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft: ...
