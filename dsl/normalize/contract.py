"""The answer contract and the verifier checks a plan's query type implies (`dsl.kinds`)."""

from __future__ import annotations

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.normalize.env import Env, where


def bind_contract(plan: Plan, env: Env) -> Plan:
    expected = kind_of(plan.query_type).contract
    if plan.answer_contract is None:
        return plan.model_copy(update={"answer_contract": expected})
    if plan.answer_contract is expected:
        return plan
    qt = plan.query_type.value
    raise PlanError(
        "contract_mismatch",
        f"answer_contract `{plan.answer_contract.value}` does not fit a `{qt}` plan",
        hint=f'a {qt} plan answers "{expected.value}"; use it or drop answer_contract',
        details=where(
            "answer_contract",
            plan.span,
            query_type=qt,
            answer_contract=plan.answer_contract.value,
            expected=expected.value,
        ),
    )


def fill_verifier_checks(plan: Plan, env: Env) -> Plan:
    """Every check the verifier will run: the mandatory ones, then those the plan
    names (its query type's defaults when it names none), fresh_evidence when
    freshness is asked, within_scope when the plan has a project scope."""
    kind = kind_of(plan.query_type)
    fresh = plan.retrieval_policy.require_fresh_fact
    scoped = plan.scope.project_id is not None
    out = kind.checks_for(plan.verifier_checks, fresh=fresh, scoped=scoped)
    return plan if out == plan.verifier_checks else plan.model_copy(update={"verifier_checks": out})
