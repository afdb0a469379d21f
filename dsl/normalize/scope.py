"""Scope binding: the caller's tenant, and the context the plan left out."""

from __future__ import annotations

from qdsl.dsl.errors import PolicyError
from qdsl.dsl.ir import ObjectRef, Plan, Scope
from qdsl.dsl.normalize.entity import resolve_entity
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.tenant import valid_tenant


def bind_tenant(plan: Plan, env: Env) -> Plan:
    """The tenant comes from the caller; a plan naming another one is refused."""
    tenant = env.context.tenant_id
    if tenant is not None:
        valid_tenant(tenant, env.limits)  # blank or malformed is a usage error, never "no tenant"
    if tenant is None or plan.scope.tenant_id == tenant:
        return plan
    if plan.scope.tenant_id is not None:
        raise PolicyError(
            "tenant_scope_mismatch",
            f"the plan names tenant `{plan.scope.tenant_id}` but the caller is tenant `{tenant}`",
            hint="drop scope.tenant_id; the tenant comes from the caller",
            retryable=False,
            details=where("scope.tenant_id", plan.span, plan_tenant=plan.scope.tenant_id),
        )
    return plan.model_copy(update={"scope": _with_tenant(plan.scope, tenant)})


def _with_tenant(scope: Scope, tenant: str) -> Scope:
    """`scope` with the caller's tenant. A plan without a scope shares the default
    one, so its tenant-bound copy is made once per tenant (scopes are frozen)."""
    if scope is not _DEFAULT_SCOPE:
        return scope.model_copy(update={"tenant_id": tenant})
    found = _TENANT_SCOPES.get(tenant)
    if found is None:
        found = _DEFAULT_SCOPE.model_copy(update={"tenant_id": tenant})
        if len(_TENANT_SCOPES) >= _MAX_TENANT_SCOPES:
            _TENANT_SCOPES.clear()
        _TENANT_SCOPES[tenant] = found
    return found


_DEFAULT_SCOPE = Plan.model_fields["scope"].default
_TENANT_SCOPES: dict[str, Scope] = {}
_MAX_TENANT_SCOPES = 1024


def _bind_ref(ref: ObjectRef, env: Env, path: str) -> ObjectRef:
    key = resolve_entity(ref.entity_type, env.catalog, path, ref.span)
    return ref if key == ref.entity_type else ref.model_copy(update={"entity_type": key})


def merge_context(plan: Plan, env: Env) -> Plan:
    """Project and thread anchor from the context unless the plan has its own; the
    referenced objects of both, each bound to a catalog entity, without repeats."""
    ctx = env.context
    scope = plan.scope
    if (
        ctx.project_id is None
        and ctx.thread_anchor is None
        and not ctx.referenced_objects
        and not scope.referenced_objects
    ):
        return plan  # nothing to merge and no reference to bind
    refs: dict[tuple[str, str], ObjectRef] = {}
    bound = [
        _bind_ref(r, env, f"scope.referenced_objects[{i}].entity_type")
        for i, r in enumerate(scope.referenced_objects)
    ]
    bound += [
        _bind_ref(r, env, f"context.referenced_objects[{i}].entity_type")
        for i, r in enumerate(ctx.referenced_objects)
    ]
    for ref in bound:
        refs.setdefault((ref.entity_type, ref.id), ref)
    new = scope.model_copy(
        update={
            "project_id": scope.project_id if scope.project_id is not None else ctx.project_id,
            "thread_anchor": (
                scope.thread_anchor if scope.thread_anchor is not None else ctx.thread_anchor
            ),
            "referenced_objects": tuple(refs.values()),
        }
    )
    return plan if new == scope else plan.model_copy(update={"scope": new})
