"""Scope binding: the caller's tenant, the project scope, and the context the plan left out."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import NotCoveredError, PlanError, PolicyError
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
    """The referenced objects of the plan and of the context, each bound to a
    catalog entity, without repeats. A referenced object names a subject of the
    plan: one of another entity than the plan's is refused when the plan wrote
    it (nothing would apply it) and left out when it comes from the context
    (the conversation's other objects are not this plan's subjects)."""
    ctx = env.context
    scope = plan.scope
    if not ctx.referenced_objects and not scope.referenced_objects:
        return plan  # nothing to merge and no reference to bind
    refs: dict[tuple[str, str], ObjectRef] = {}
    entity = resolve_entity(plan.entity_type, env.catalog, "entity_type", plan.span)
    for i, r in enumerate(scope.referenced_objects):
        ref = _bind_ref(r, env, f"scope.referenced_objects[{i}].entity_type")
        if ref.entity_type != entity:
            raise _foreign_ref(ref, entity, i, env.catalog)
        refs.setdefault((ref.entity_type, ref.id), ref)
    for i, r in enumerate(ctx.referenced_objects):
        ref = _bind_ref(r, env, f"context.referenced_objects[{i}].entity_type")
        if ref.entity_type == entity:
            refs.setdefault((ref.entity_type, ref.id), ref)
    new = scope.model_copy(update={"referenced_objects": tuple(refs.values())})
    return plan if new == scope else plan.model_copy(update={"scope": new})


def _foreign_ref(ref: ObjectRef, entity: str, index: int, catalog: Catalog) -> PlanError:
    by = next(
        (n for n, f in catalog.entities[entity].fields.items() if f.references == ref.entity_type),
        None,
    )
    hint = (
        f'filter on it instead: `where {by} = "{ref.id}"`'
        if by is not None
        else f"`about` names {entity} subjects only"
    )
    return PlanError(
        "foreign_reference",
        f"`about {ref.entity_type} {ref.id}` names no {entity}: a referenced object is a "
        "subject of the plan, of the plan's entity",
        hint=hint,
        details=where(
            f"scope.referenced_objects[{index}]", ref.span, entity_type=ref.entity_type, id=ref.id
        ),
    )


def bind_scope(plan: Plan, env: Env) -> Plan:
    """The project scope, bound through the catalog's `[scope]`.

    A plan's own `project` must be applicable: the catalog declares what a
    project scope names, and the plan's entity has the field that carries it
    (or is that entity), else `not_covered/scope_not_covered`. The context's
    project scopes a plan over an entity that references the scope's entity
    and that does not state a condition on that field itself (the question's
    own words win): the conversation's project narrows what lies in it, not
    which projects there are. Any other plan runs unscoped (the pipeline says
    so in its warnings)."""
    catalog = env.catalog
    own = plan.scope.project_id
    if own is not None:
        if catalog.scope_field(plan.entity_type) is None:
            raise _not_scoped(plan, catalog)
        return plan
    wanted = env.context.project_id
    if wanted is None or not context_scope_applies(plan, catalog):
        return plan
    return plan.model_copy(update={"scope": plan.scope.model_copy(update={"project_id": wanted})})


def context_scope_applies(plan: Plan, catalog: Catalog) -> bool:
    """Whether a context's project scopes `plan` (a normalized plan's entity)."""
    name = catalog.scope_field(plan.entity_type)
    if name is None or catalog.scope is None or plan.entity_type == catalog.scope.entity:
        return False
    return all(f.field != name for f in plan.filters)


def _not_scoped(plan: Plan, catalog: Catalog) -> NotCoveredError:
    scope = catalog.scope
    if scope is None:
        reason = "this catalog declares no project scope (`[scope]`)"
        hint = "drop the project scope, or declare `[scope] entity = ...` in the catalog"
    else:
        reason = (
            f"`{plan.entity_type}` has no field referencing `{scope.entity}`, "
            f"so a {scope.entity} scope cannot apply to it"
        )
        hint = f"drop the project scope: {plan.entity_type} rows belong to no {scope.entity}"
    return NotCoveredError(
        "scope_not_covered",
        f"the plan is scoped to project {plan.scope.project_id!r}, but {reason}",
        hint=hint,
        details=where(
            "scope.project_id",
            plan.span,
            entity_type=plan.entity_type,
            scope_entity=scope.entity if scope is not None else None,
        ),
    )
