"""Sort binding: only the entity's declared sort fields; list plans get the default sort."""

from __future__ import annotations

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan, Sort, SortDirection
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.names import resolve_sort_field
from qdsl.dsl.suggest import did_you_mean, suggest


def bind_sort(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    bound: dict[str, Sort] = {}
    for i, s in enumerate(plan.sort):
        found = resolve_sort_field(ent, s.field)
        if found is None:
            spellings = {n: n for n in ent.sorts}
            spellings.update((a, t) for a, t in ent.names.items() if t in ent.sorts)
            suggestions = suggest(s.field, spellings)
            raise PlanError(
                "unknown_sort_field",
                f"`{s.field}` is not a sort field of {ent.name}",
                hint=did_you_mean(suggestions, ent.sorts, f"sort fields of {ent.name}"),
                details=where(
                    f"sort[{i}].field",
                    s.span,
                    entity=ent.name,
                    field=s.field,
                    allowed=list(ent.sorts),
                    suggestions=list(suggestions),
                ),
            )
        # A second key on the same field can never change the order; the first wins.
        if found not in bound:
            bound[found] = s if found == s.field else s.model_copy(update={"field": found})
    out = tuple(bound.values())
    sorted_by_default = kind_of(plan.query_type).default_sorted
    if not out and sorted_by_default and ent.default_sort is not None:
        field, direction = ent.default_sort
        out = (Sort(field=field, direction=SortDirection(direction)),)
    if len(out) == len(plan.sort) and all(a is b for a, b in zip(out, plan.sort, strict=True)):
        return plan
    return plan.model_copy(update={"sort": out})
