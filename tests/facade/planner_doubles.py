"""Planner test doubles: a spy and an adversary. Import as `from planner_doubles import ...`."""

from __future__ import annotations

from dataclasses import dataclass, field

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.printer import to_text
from qdsl.dsl.question import read_question
from qdsl.planner import PlanDraft, RulePlanner, plan_from_reading


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
        plan = plan_from_reading(read_question(question, catalog), catalog)
        if plan.query_type is QueryType.EXISTENCE:
            plan = plan.model_copy(update={"query_type": QueryType.COUNT})
            if not self.keep_filters:
                plan = plan.model_copy(update={"filters": ()})
        return PlanDraft(text=to_text(plan), planner=self.name)


@dataclass
class ScriptedModel:
    """An LLM completion double for `LLMPlanner`: replies with the same plan text
    to every prompt, feedback or not, and keeps the prompts it was sent."""

    reply: str
    prompts: list[str] = field(default_factory=list)

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply
