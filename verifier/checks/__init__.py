"""The verifier's checks: small named functions, each returning issues.

`DEFAULT_CHECKS` runs on every answer; a caller extends it with
`(*DEFAULT_CHECKS, my_check)` or replaces it. A check's name is its function's
`__name__`.
"""

from __future__ import annotations

from qdsl.verifier.checks.base import Check, Subject, error, warning
from qdsl.verifier.checks.conditions import covers_conditions
from qdsl.verifier.checks.consistency import consistent_with_result
from qdsl.verifier.checks.contract import contract_matches_query_type
from qdsl.verifier.checks.counts import no_total_count_substitution
from qdsl.verifier.checks.evidence import evidence_backed
from qdsl.verifier.checks.freshness import fresh_evidence
from qdsl.verifier.checks.limits import within_limit
from qdsl.verifier.checks.question import question_covered
from qdsl.verifier.checks.tenancy import route_contract_internal, tenant_consistent

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
    question_covered,
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
    "question_covered",
    "route_contract_internal",
    "tenant_consistent",
    "warning",
    "within_limit",
]
