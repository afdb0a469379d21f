"""A plan's grouping: a breakdown names one or two groupable fields, no other kind any.

Checked here so that a plan grouped on a sensitive, fact or unknown field, or by
a grain the catalog does not list, is refused as a plan (typed, with the fields
or grains that would do), not when it runs; and a grouping on a kind that does
not group is refused rather than parsed and ignored. A grouping across relations
(`customer.tier`, `customer`) is bound by `related_grouping`.
"""

from __future__ import annotations

from functools import partial

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.dsl.kinds.breakdown import check_groupings
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env
from qdsl.dsl.normalize.related_grouping import bind_related_grouping
from qdsl.dsl.normalize.related_grouping import is_related_grouping as is_related


def bind_grouping(plan: Plan, env: Env) -> Plan:
    if plan.query_type is QueryType.BREAKDOWN:
        if plan.sort:
            raise PlanError(
                "sort_not_applicable",
                "a breakdown orders its groups by their counts, largest first; it takes no order",
                hint="drop `order by`; `limit N` keeps the N largest groups",
                details={"path": "sort", "query_type": plan.query_type.value},
            )
        ent = entity_of(plan, env)
        catalog = env.catalog
        bound = check_groupings(ent, plan.group_by, related=partial(is_related, catalog, ent))
        bound = tuple(
            bind_related_grouping(catalog, ent, g) if is_related(catalog, ent, g.field) else g
            for g in bound
        )
        return plan if bound == plan.group_by else plan.model_copy(update={"group_by": bound})
    if plan.group_by:
        raise PlanError(
            "grouping_not_applicable",
            f"a {plan.query_type.value} plan does not group; `group by` belongs to a breakdown",
            hint=f"write `breakdown {plan.entity_type} ... group by ...`, or drop `group by`",
            details={"path": "group_by", "query_type": plan.query_type.value},
        )
    return plan
