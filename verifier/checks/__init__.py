"""The verifier's checks: small named functions, each returning issues.

`CHECKS` maps every name a plan can write (`dsl.kinds.VerifierCheck`) to its
function; a check's name is its function's `__name__`. The verifier runs the
plan's checks plus the mandatory ones (`dsl.kinds.MANDATORY_CHECKS` and the
query type's own), then any a caller adds.
"""

from __future__ import annotations

from collections.abc import Mapping

from qdsl.dsl.kinds import VerifierCheck
from qdsl.verifier.checks.base import Check, Subject, error, skipped, warning
from qdsl.verifier.checks.conditions import covers_conditions
from qdsl.verifier.checks.consistency import consistent_with_result
from qdsl.verifier.checks.contract import contract_matches_query_type
from qdsl.verifier.checks.counts import no_total_count_substitution
from qdsl.verifier.checks.evidence import evidence_backed
from qdsl.verifier.checks.freshness import fresh_evidence
from qdsl.verifier.checks.limits import within_limit
from qdsl.verifier.checks.question import question_covered
from qdsl.verifier.checks.tenancy import route_contract_internal, tenant_consistent, within_scope

CHECKS: Mapping[VerifierCheck, Check] = {
    VerifierCheck(check.__name__): check
    for check in (
        route_contract_internal,
        tenant_consistent,
        contract_matches_query_type,
        evidence_backed,
        no_total_count_substitution,
        consistent_with_result,
        covers_conditions,
        fresh_evidence,
        within_limit,
        question_covered,
        within_scope,
    )
}

__all__ = [
    "CHECKS",
    "Check",
    "Subject",
    "consistent_with_result",
    "contract_matches_query_type",
    "covers_conditions",
    "error",
    "evidence_backed",
    "fresh_evidence",
    "no_total_count_substitution",
    "question_covered",
    "route_contract_internal",
    "skipped",
    "tenant_consistent",
    "warning",
    "within_limit",
    "within_scope",
]
