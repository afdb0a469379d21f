"""tenant_consistent and route_contract_internal: nothing crosses a boundary."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue, Outcome

TENANT = "tenant_consistent"
ROUTE = "route_contract_internal"


def _leak(message: str) -> Issue:
    # A tenant leak is a defect, not bad luck: no retry may paper over it.
    return error(TENANT, message, Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE, retryable=False)


def tenant_consistent(s: Subject) -> Iterator[Issue]:
    tenant = s.context.tenant_id
    result = s.result
    if result.tenant_id != tenant:
        yield _leak(f"the result is for tenant {result.tenant_id}, the caller is {tenant}")
    scoped = s.plan.scope.tenant_id
    if scoped is not None and scoped != tenant:
        yield _leak(f"the plan is scoped to tenant {scoped}, the caller is {tenant}")
    for row in result.rows:
        if row.tenant_id != tenant:
            yield _leak(f"row {row.entity_type}:{row.entity_id} belongs to another tenant")
    for ev in result.evidence:
        if ev.tenant_id != tenant:
            yield _leak(f"evidence {ev.id} belongs to another tenant")


def route_contract_internal(s: Subject) -> Iterator[Issue]:
    if s.context.route_mode != "internal":
        yield error(
            ROUTE,
            f"route_mode {s.context.route_mode!r} is not internal; only internal data is answered",
            Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE,
            retryable=False,
        )
    if not s.plan.scope.tenant_bound:
        yield error(ROUTE, "the plan is not tenant-bound", retryable=False)
