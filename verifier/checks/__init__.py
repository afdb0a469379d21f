"""The verifier's checks: small named functions, each returning issues.

`DEFAULT_CHECKS` runs on every answer; a caller extends it with
`(*DEFAULT_CHECKS, my_check)` or replaces it. A check's name is its function's
`__name__`.
"""

from __future__ import annotations

from verifier.checks.base import Check, Subject, error, warning
from verifier.checks.conditions import covers_conditions
from verifier.checks.consistency import consistent_with_result
from verifier.checks.contract import contract_matches_query_type
from verifier.checks.counts import no_total_count_substitution
from verifier.checks.evidence import evidence_backed
from verifier.checks.freshness import fresh_evidence
from verifier.checks.limits import within_limit
from verifier.checks.tenancy import route_contract_internal, tenant_consistent

DEFAULT_CHECKS: tuple[Check, ...] = (
    route_contract_internal,
    tenant_consistent,
    contract_matches_query_type,
    evidence_backed,
    no_total_count_substitution,
    consistent_with_result,
    covers_conditions,
    fresh_evidence,
    within_limit,
)

__all__ = [
    "DEFAULT_CHECKS",
    "Check",
    "Subject",
    "consistent_with_result",
    "contract_matches_query_type",
    "covers_conditions",
    "error",
    "evidence_backed",
    "fresh_evidence",
    "no_total_count_substitution",
    "route_contract_internal",
    "tenant_consistent",
    "warning",
    "within_limit",
]
