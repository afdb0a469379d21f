"""Limits and retrieval policy defaults."""

from __future__ import annotations

from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env

DEFAULT_FRESHNESS_DAYS = 30
"""The freshness window when a plan requires fresh facts but names no window."""


def fill_limit(plan: Plan, env: Env) -> Plan:
    """The entity's default_limit when none is given, clamped to its max_limit.

    A count reads no rows, so a count plan carries no limit at all.
    """
    ent = entity_of(plan, env)
    if not kind_of(plan.query_type).limited:
        if plan.limit is None:
            return plan
        env.warn(f"limit {plan.limit} ignored: a {plan.query_type.value} plan has no limit")
        return plan.model_copy(update={"limit": None})
    if plan.limit is None:
        return plan.model_copy(update={"limit": ent.default_limit})
    if plan.limit > ent.max_limit:
        env.warn(f"limit {plan.limit} clamped to {ent.max_limit} (max_limit of {ent.name})")
        return plan.model_copy(update={"limit": ent.max_limit})
    return plan


def fill_retrieval_policy(plan: Plan, env: Env) -> Plan:
    policy = plan.retrieval_policy
    if not policy.require_fresh_fact or policy.freshness_days is not None:
        return plan
    new = policy.model_copy(update={"freshness_days": DEFAULT_FRESHNESS_DAYS})
    return plan.model_copy(update={"retrieval_policy": new})
