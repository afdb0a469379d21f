"""Blacklist cleansing: sensitive fields are never projected, filtered, sorted or grouped on.

A projection only shows less, so a sensitive name there is dropped with a
warning; a filter or sort would leak the value through the result, so it is
refused as a policy error.
"""

from __future__ import annotations

from qdsl.dsl.errors import PolicyError
from qdsl.dsl.ir import Plan, Span
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.names import (
    is_sensitive,
    resolve_filter_field,
    resolve_projection,
    resolve_sort_field,
)


def _refuse(entity: str, name: str, use: str, path: str, span: Span | None) -> PolicyError:
    return PolicyError(
        "sensitive_field",
        f"`{name}` is a sensitive field of {entity} and cannot be {use}",
        hint=f"remove `{name}` from the plan; sensitive fields are never filtered or sorted on",
        retryable=False,
        details=where(path, span, entity=entity, field=name),
    )


def cleanse_sensitive(plan: Plan, env: Env) -> Plan:
    ent = entity_of(plan, env)
    for i, f in enumerate(plan.filters):
        if is_sensitive(ent, f.field, resolve_filter_field(ent, f.field)):
            raise _refuse(ent.name, f.field, "filtered on", f"filters[{i}].field", f.span)
    for i, s in enumerate(plan.sort):
        if is_sensitive(ent, s.field, resolve_sort_field(ent, s.field)):
            raise _refuse(ent.name, s.field, "sorted on", f"sort[{i}].field", s.span)
    for i, g in enumerate(plan.group_by):
        if is_sensitive(ent, g.field, ent.names.get(g.field, g.field)):
            raise _refuse(ent.name, g.field, "grouped on", f"group_by[{i}].field", g.span)
    kept: list[str] = []
    for name in plan.projection:
        if is_sensitive(ent, name, resolve_projection(ent, name)):
            env.warn(f"projection `{name}` dropped: sensitive field of {ent.name}")
        else:
            kept.append(name)
    if len(kept) == len(plan.projection):
        return plan
    return plan.model_copy(update={"projection": tuple(kept)})
