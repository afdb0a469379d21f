"""normalize(): the rules applied in order to a raw plan."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import InternalError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize.contract import bind_contract, fill_verifier_checks
from qdsl.dsl.normalize.entity import bind_entity, check_query_type
from qdsl.dsl.normalize.env import Env, NormalizedPlan, PlanContext, Rule
from qdsl.dsl.normalize.filters import bind_filters
from qdsl.dsl.normalize.grouping import bind_grouping
from qdsl.dsl.normalize.limits import fill_limit, fill_retrieval_policy
from qdsl.dsl.normalize.measure import bind_measure
from qdsl.dsl.normalize.projection import bind_projection
from qdsl.dsl.normalize.scope import bind_scope, bind_tenant, merge_context
from qdsl.dsl.normalize.sensitive import cleanse_sensitive
from qdsl.dsl.normalize.sorting import bind_sort
from qdsl.dsl.normalize.values import check_values, normalize_values
from qdsl.dsl.settings.limits import Limits

# Order matters: a plan reaching for another tenant is refused before anything
# else is said about it; the entity is bound before every rule that reads it;
# sensitive names are refused or dropped before binding could call them merely
# unknown (which would hint that they exist under another spelling); the project
# scope is bound once filters are, as a condition on its field replaces the context's.
DEFAULT_RULES: tuple[Rule, ...] = (
    bind_tenant,
    bind_entity,
    check_query_type,
    bind_contract,
    merge_context,
    cleanse_sensitive,
    bind_filters,
    bind_scope,
    check_values,
    normalize_values,
    bind_projection,
    bind_measure,
    bind_grouping,
    bind_sort,
    fill_limit,
    fill_retrieval_policy,
    fill_verifier_checks,
)


def normalize(
    plan: Plan,
    catalog: Catalog,
    context: PlanContext | None = None,
    *,
    rules: tuple[Rule, ...] = DEFAULT_RULES,
    limit: Limits | None = None,
) -> NormalizedPlan:
    """Bind a raw plan to the catalog and the caller's context, filling every default.

    Raises a QdslError subclass naming where the plan is wrong. Normalizing a
    normalized plan again (same catalog and context) changes nothing and warns
    about nothing. The result carries the plan bound for the executor, with the
    context's tenant (never the plan's). `limit`: the input limits already read
    for this call, if any.
    """
    env = Env(catalog=catalog, context=context or PlanContext(), limits=limit)
    for rule in rules:
        try:
            plan = rule(plan, env)
        except QdslError:
            raise
        except Exception as exc:
            name = getattr(rule, "__name__", repr(rule))
            raise InternalError(
                "normalizer_rule_crashed",
                f"normalizer rule `{name}` crashed: {type(exc).__name__}: {exc}",
                hint="this is a defect in qdsl; report it with the plan",
                details={"rule": name},
            ) from exc
    return NormalizedPlan(
        plan=plan, warnings=tuple(env.warnings), catalog=catalog, tenant_id=env.context.tenant_id
    )
