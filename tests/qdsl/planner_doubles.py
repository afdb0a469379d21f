"""Planner test doubles: a spy and an adversary. Import as `from planner_doubles import ...`."""

from __future__ import annotations

from dataclasses import dataclass, field

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.printer import to_text
from qdsl.planner import PlanDraft, RulePlanner, read_question
from qdsl.planner.rule import reading_to_plan


@dataclass
class SpyPlanner:
    """Delegates to the rule planner and records every question it was asked."""

    name: str = "spy"
    questions: list[str] = field(default_factory=list)
    feedback: list[str | None] = field(default_factory=list)

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        self.questions.append(question)
        self.feedback.append(feedback)
        return RulePlanner().plan(question, catalog=catalog, context=context, feedback=feedback)


@dataclass
class CountingAdversary:
    """Answers every existence question with a count plan (filters kept or dropped)."""

    keep_filters: bool = True
    name: str = "adversary"
    calls: int = 0
    feedback: list[str | None] = field(default_factory=list)

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        self.calls += 1
        self.feedback.append(feedback)
        reading = read_question(question, catalog)
        if reading.query_type is QueryType.EXISTENCE:
            reading.query_type = QueryType.COUNT
            if not self.keep_filters:
                reading.filters = []
        return PlanDraft(text=to_text(reading_to_plan(reading, catalog)), planner=self.name)
