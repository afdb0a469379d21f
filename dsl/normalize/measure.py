"""A plan's measure: an aggregate names one field whose catalog aggregations allow it.

Checked here so that a plan an LLM or the rule planner wrote without one is
refused as a plan (typed, with the fields that would do), not when it runs.
"""

from __future__ import annotations

from qdsl.dsl.ir import Plan, QueryType
from qdsl.dsl.kinds.aggregate import measure_of
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env


def check_measure(plan: Plan, env: Env) -> Plan:
    if plan.query_type is QueryType.AGGREGATE:
        measure_of(entity_of(plan, env), plan.projection)
    return plan
