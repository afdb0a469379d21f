"""qdsl: questions to whitelisted, tenant-bound, verified answers.

Public API (docs/python-api.md): `plan_and_answer`, `aplan_and_answer` and
their `AnswerOptions`; the result types `AnswerResult`, `Verdict`, `Evidence`;
`load_catalog` / `Catalog`, `PlanContext`, and the planners `RulePlanner` and
`LLMPlanner`. Imports are lazy so that the CLI starts fast: `import qdsl`
loads nothing until one of these names is read.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qdsl.api import AnswerOptions, aplan_and_answer, demo_engine, plan_and_answer
    from qdsl.dsl.catalog import Catalog, load_catalog
    from qdsl.dsl.normalize import PlanContext
    from qdsl.executor.result import Evidence
    from qdsl.pipeline import AnswerResult, Status
    from qdsl.planner import LLMPlanner, RulePlanner
    from qdsl.verifier import Verdict

# public name -> the module that defines it
_WHERE: dict[str, str] = {
    "AnswerOptions": "qdsl.api",
    "aplan_and_answer": "qdsl.api",
    "demo_engine": "qdsl.api",
    "plan_and_answer": "qdsl.api",
    "AnswerResult": "qdsl.pipeline",
    "Status": "qdsl.pipeline",
    "Catalog": "qdsl.dsl.catalog",
    "load_catalog": "qdsl.dsl.catalog",
    "PlanContext": "qdsl.dsl.normalize",
    "Evidence": "qdsl.executor.result",
    "LLMPlanner": "qdsl.planner",
    "RulePlanner": "qdsl.planner",
    "Verdict": "qdsl.verifier",
}

__all__ = [
    "AnswerOptions",
    "AnswerResult",
    "Catalog",
    "Evidence",
    "LLMPlanner",
    "PlanContext",
    "RulePlanner",
    "Status",
    "Verdict",
    "aplan_and_answer",
    "demo_engine",
    "load_catalog",
    "plan_and_answer",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'qdsl' has no attribute {name!r}")
    return getattr(import_module(module), name)
