"""The answer contract and the verifier checks a plan's query type implies."""

from __future__ import annotations

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import CONTRACT_FOR, Plan, QueryType, VerifierCheck
from qdsl.dsl.normalize.env import Env, where

_C = VerifierCheck

# What the verifier must prove for each kind of answer when the plan names no
# checks. Every answer has to match its contract and stay in its tenant; a
# count is where a total could pass for a filtered count, a yes/no or a
# snapshot is worthless without evidence.
DEFAULT_CHECKS: dict[QueryType, tuple[VerifierCheck, ...]] = {
    QueryType.EXISTENCE: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.EVIDENCE_BACKED,
        _C.NO_TOTAL_COUNT_SUBSTITUTION,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
        _C.WITHIN_LIMIT,
    ),
    QueryType.COUNT: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.NO_TOTAL_COUNT_SUBSTITUTION,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
    ),
    QueryType.LIST: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
        _C.WITHIN_LIMIT,
    ),
    QueryType.STATUS: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.EVIDENCE_BACKED,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
    ),
    QueryType.EXPLAIN: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.EVIDENCE_BACKED,
        _C.TENANT_CONSISTENT,
        _C.WITHIN_LIMIT,
    ),
    QueryType.DIAGNOSE: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.EVIDENCE_BACKED,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
    ),
    QueryType.COMPARE: (
        _C.CONTRACT_MATCHES_QUERY_TYPE,
        _C.EVIDENCE_BACKED,
        _C.COVERS_CONDITIONS,
        _C.TENANT_CONSISTENT,
    ),
    QueryType.UNKNOWN: (_C.CONTRACT_MATCHES_QUERY_TYPE,),
}


def bind_contract(plan: Plan, env: Env) -> Plan:
    expected = CONTRACT_FOR[plan.query_type]
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
    """The query type's defaults when none are named; fresh_evidence when freshness is asked."""
    checks = list(dict.fromkeys(plan.verifier_checks or DEFAULT_CHECKS[plan.query_type]))
    if plan.retrieval_policy.require_fresh_fact and _C.FRESH_EVIDENCE not in checks:
        checks.append(_C.FRESH_EVIDENCE)
    out = tuple(checks)
    return plan if out == plan.verifier_checks else plan.model_copy(update={"verifier_checks": out})
