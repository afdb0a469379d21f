"""Planners: a question in, plan text out. `RulePlanner` (built in) and `LLMPlanner`."""

from __future__ import annotations

from qdsl.planner.base import Attempt, PlanDraft, Planner
from qdsl.planner.cues import classify
from qdsl.planner.llm import LLMPlanner, extract_plan
from qdsl.planner.prompt import build_prompt
from qdsl.planner.rule import RulePlanner, intended_query_type, plan_from_reading

__all__ = [
    "Attempt",
    "LLMPlanner",
    "PlanDraft",
    "Planner",
    "RulePlanner",
    "build_prompt",
    "classify",
    "extract_plan",
    "intended_query_type",
    "plan_from_reading",
]
