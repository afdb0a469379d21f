"""Projection binding: whitelisted names only, aliases resolved, defaulted when empty;
a field of a related entity through many-to-one relations (`customer.city`)."""

from __future__ import annotations

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.names import projectable, resolve_projection
from qdsl.dsl.normalize.related import is_related, resolve_related_projection
from qdsl.dsl.suggest import did_you_mean, suggest


def bind_projection(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    bound: list[str] = []
    for i, name in enumerate(plan.projection):
        if is_related(name):
            bound.append(resolve_related_projection(env.catalog, ent, name, i)[0])
            continue
        found = resolve_projection(ent, name)
        if found is None:
            known = projectable(ent)
            spellings = {n: n for n in known}
            spellings.update((a, t) for a, t in ent.names.items() if t in known)
            suggestions = suggest(name, spellings)
            raise PlanError(
                "unknown_field",
                f"`{name}` is not a projectable field of {ent.name}",
                hint=did_you_mean(suggestions, known, f"projectable fields of {ent.name}"),
                details=where(
                    f"projection[{i}]",
                    None,
                    entity=ent.name,
                    field=name,
                    suggestions=list(suggestions),
                ),
            )
        bound.append(found)
    # an aggregate shows its measure, not the entity's default fields
    shown = () if plan.measure is not None else ent.default_projection
    out = tuple(dict.fromkeys(bound)) or shown
    return plan if out == plan.projection else plan.model_copy(update={"projection": out})
