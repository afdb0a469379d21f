"""What the verifier reads and returns: the answer under test, issues, the verdict.

An `Answer` is whatever is about to leave: the renderer's, or one written
elsewhere (a RAG backend's own LLM text plus the evidence ids it cites). The
verifier judges it only against the plan and this execution's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import AnswerContract, QueryType
from qdsl.dsl.question import Reading

Language = Literal["zh", "en"]
# skipped: the check did not run (question_covered without a question); `verify`
# lists it in `Verdict.skipped` and keeps the issue out of `Verdict.issues`.
Level = Literal["error", "warning", "skipped"]


class Outcome(StrEnum):
    PASS = "pass"
    RETRY_WITH_SAME_PLAN = "retry_with_same_plan"
    RETRY_WITH_CLARIFIED_PLAN = "retry_with_clarified_plan"
    EXPLICIT_INSUFFICIENT_EVIDENCE = "explicit_insufficient_evidence"


# A verdict takes the gravest outcome among its errors: a new plan is a bigger
# step than a re-render, and "we cannot back this" ends the attempt.
OUTCOME_RANK: dict[Outcome, int] = {
    Outcome.PASS: 0,
    Outcome.RETRY_WITH_SAME_PLAN: 1,
    Outcome.RETRY_WITH_CLARIFIED_PLAN: 2,
    Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE: 3,
}


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    contract: AnswerContract
    text: str
    data: dict[str, Any] = Field(default_factory=dict)
    cited_evidence: tuple[str, ...] = ()
    language: Language = "en"


class Issue(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    check: str
    level: Level = "error"
    message: str
    # What failing this check asks the caller to do.
    outcome: Outcome = Outcome.RETRY_WITH_SAME_PLAN
    # False: no retry can fix it (tenant leak, wrong route); refuse at once.
    retryable: bool = True


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Outcome
    # the checks that ran: each is in `passed` or in `failed`
    checks_run: tuple[str, ...]
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    issues: tuple[Issue, ...] = ()
    # checks that had nothing to judge and did not run: neither passed nor failed
    skipped: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.PASS

    @property
    def retryable(self) -> bool:
        return all(i.retryable for i in self.issues if i.level == "error")

    def errors(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.level == "error")


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, kw_only=True)
class VerifyContext:
    """Who asks and how: the verifier never takes these from the plan or the answer.

    The catalog is the deployment's own; there is no default, so a check never
    judges one deployment's answer by another's names.
    """

    tenant_id: str
    catalog: Catalog
    route_mode: str = "internal"
    now: datetime = field(default_factory=_utcnow)
    # The query type the question's own wording asks for (from the rule planner's
    # cues), independent of whichever planner wrote the plan. None: not known.
    expected_query_type: QueryType | None = None
    # Used by fresh_evidence when the plan sets require_fresh_fact without a window.
    default_freshness_days: int | None = None
    # The question read against the catalog (question accounting), for the
    # mandatory `question_covered` check. None: no question (a caller's plan).
    question: Reading | None = None
