"""The records the question pipeline passes around: its settings, the planner
call it asks its driver to make, and the `AnswerResult` it ends with.

`qdsl.pipeline` (the flow) and `qdsl.stages` (its steps) share them; `qdsl.api`
drives the flow with them.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PolicyError, QdslError
from qdsl.dsl.ir import AnswerContract, Plan, QueryType
from qdsl.dsl.linking import ValueSource
from qdsl.dsl.normalize import PlanContext
from qdsl.executor.result import Evidence
from qdsl.gate import GateLexicon
from qdsl.planner import Attempt, PlanDraft, Planner
from qdsl.verifier import Language, Verdict
from qdsl.verifier.checks import Check

Status = Literal["answered", "gated", "clarify", "insufficient_evidence", "not_covered", "refused"]


@dataclass(frozen=True)
class AnswerResult:
    status: Status
    trace_id: str
    language: Language
    query_type: QueryType | None = None
    answer_contract: AnswerContract | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    plan: Plan | None = None
    verdict: Verdict | None = None
    gate_kind: str | None = None
    planner: str | None = None
    attempts: tuple[Attempt, ...] = ()
    warnings: tuple[str, ...] = ()
    execution_id: str | None = None
    # Why there is no answer when a retryable failure (the LLM API down) ended it.
    error: QdslError | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `ask` / `run` envelope data (docs/python-api.md): `answer` is the contract's data."""
        return {
            "status": self.status,
            "query_type": self.query_type.value if self.query_type else None,
            "answer_contract": self.answer_contract.value if self.answer_contract else None,
            "text": self.text,
            "answer": self.data,
            "evidence": [e.model_dump(mode="json") for e in self.evidence],
            "plan": self.plan.to_json_dict() if self.plan is not None else None,
            "verdict": self.verdict.model_dump(mode="json") if self.verdict else None,
            "trace_id": self.trace_id,
            "language": self.language,
            "gate_kind": self.gate_kind,
            "execution_id": self.execution_id,
        }


@dataclass(frozen=True)
class Settings:
    catalog: Catalog
    planner: Planner
    now: datetime
    route_mode: str = "internal"
    context: PlanContext | None = None
    lexicon: GateLexicon | None = None
    checks: tuple[Check, ...] | None = None
    same_plan_tries: int = 2
    replans: int = 1
    # Where the asking tenant's linkable values come from (None: no value linking).
    values: ValueSource | None = None


@dataclass(frozen=True)
class PlanCall:
    """The flow asks its driver for a plan: the sync driver calls the planner, the
    asyncio driver awaits its `aplan` or runs `plan` in a worker thread."""

    planner: Planner
    question: str
    catalog: Catalog
    context: PlanContext
    feedback: str | None

    def run(self) -> PlanDraft:
        return self.planner.plan(
            self.question, catalog=self.catalog, context=self.context, feedback=self.feedback
        )

    async def arun(self) -> PlanDraft:
        aplan = getattr(self.planner, "aplan", None)
        if aplan is not None and inspect.iscoroutinefunction(aplan):
            draft = await aplan(
                self.question, catalog=self.catalog, context=self.context, feedback=self.feedback
            )
            assert isinstance(draft, PlanDraft)
            return draft
        return await asyncio.to_thread(self.run)


# Yields plans to execute (sent their ExecutionResult) and PlanCalls (sent a PlanDraft).
Flow = Generator[BoundPlan | Plan | PlanCall, Any, AnswerResult]


def plan_context(tenant_id: str, context: PlanContext | None) -> PlanContext:
    if context is None:
        return PlanContext(tenant_id=tenant_id)
    if context.tenant_id is not None and context.tenant_id != tenant_id:
        raise PolicyError(
            "tenant_scope_mismatch",
            "the context names another tenant than the caller",
            hint="pass the caller's tenant only once, as tenant_id",
        )
    return PlanContext(
        tenant_id=tenant_id,
        project_id=context.project_id,
        thread_anchor=context.thread_anchor,
        referenced_objects=context.referenced_objects,
    )
