"""The normalizer: a raw plan bound to the catalog and the caller's context.

`normalize(plan, catalog, context)` applies `DEFAULT_RULES`, a tuple of small
named rules, each a pure function of (plan, env) returning a new plan. A caller
may pass its own tuple (`rules=DEFAULT_RULES + (my_rule,)`).
"""

from __future__ import annotations

from qdsl.dsl.normalize.env import Env, NormalizedPlan, PlanContext, Rule
from qdsl.dsl.normalize.limits import DEFAULT_FRESHNESS_DAYS
from qdsl.dsl.normalize.pipeline import DEFAULT_RULES, normalize

__all__ = [
    "DEFAULT_FRESHNESS_DAYS",
    "DEFAULT_RULES",
    "Env",
    "NormalizedPlan",
    "PlanContext",
    "Rule",
    "normalize",
]
