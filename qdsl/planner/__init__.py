"""Planners: a question in, plan text out. `RulePlanner` (built in) and `LLMPlanner`.

The LLM planner and its prompt are imported when first named: the rule planner's
path (`qdsl ask` without an LLM) needs neither, nor the plan parser, thread pool
and catalog slicing they bring (`tests/facade/test_ask_imports.py`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from qdsl.planner.base import Attempt, PlanDraft, Planner
from qdsl.planner.cues import classify
from qdsl.planner.rule import RulePlanner, intended_query_type, plan_from_reading

if TYPE_CHECKING:
    from qdsl.planner.llm import LLMPlanner, extract_plan
    from qdsl.planner.prompt import build_prompt

_LAZY: dict[str, str] = {
    "LLMPlanner": "qdsl.planner.llm",
    "extract_plan": "qdsl.planner.llm",
    "build_prompt": "qdsl.planner.prompt",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'qdsl.planner' has no attribute {name!r}")
    return getattr(import_module(module), name)
