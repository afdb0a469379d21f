"""A planner writing one plan whatever it is asked, as a careless LLM might: the
verifier tests hand it a plan beside the question and expect no answer."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog
from qdsl.planner.base import PlanContext, PlanDraft


class FixedPlanner:
    name = "fixed"

    def __init__(self, plan: str) -> None:
        self.text = plan

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        return PlanDraft(self.text, self.name)
