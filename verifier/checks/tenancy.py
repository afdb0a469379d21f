"""tenant_consistent, within_scope and route_contract_internal: nothing crosses a boundary."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue, Outcome

TENANT = "tenant_consistent"
SCOPE = "within_scope"
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


def within_scope(s: Subject) -> Iterator[Issue]:
    """Every row lies in the plan's project scope: its scope field (or, on the
    scope's own entity, its id) holds the scope's id. A row that does not show
    it cannot be shown to lie inside, and is refused alike."""
    scoped = s.plan.scope.project_id
    if scoped is None:
        return
    name = s.context.catalog.scope_field(s.plan.entity_type)
    entity = s.context.catalog.entities.get(s.plan.entity_type)
    if name is None or entity is None:
        yield error(
            SCOPE,
            f"the plan is scoped to {scoped!r} but the catalog cannot scope {s.plan.entity_type}",
            Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE,
            retryable=False,
        )
        return
    for row in s.result.rows:
        held = row.entity_id if name == entity.id else row.values.get(name, _UNSHOWN)
        if held is _UNSHOWN:
            yield error(SCOPE, f"row {row.entity_id} does not show its {name}: scope unchecked")
        elif str(held) != scoped:
            yield error(
                SCOPE,
                f"row {row.entity_id} has {name} {held!r}, outside the plan's scope {scoped!r}",
                Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE,
                retryable=False,
            )


_UNSHOWN = object()


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
