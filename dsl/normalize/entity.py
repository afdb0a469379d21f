"""Entity binding: a plan's entity_type becomes a catalog entity key, or is refused."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.errors import NotCoveredError, PlanError
from qdsl.dsl.ir import Plan, Span
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.suggest import did_you_mean, suggest
from qdsl.dsl.textnorm import normalize_text


def resolve_entity(name: str, catalog: Catalog, path: str, span: Span | None = None) -> str:
    """The catalog key `name` stands for: itself, any casing of a key, or a synonym."""
    if name in catalog.entities:
        return name
    found = catalog.entity_spellings.get(normalize_text(name))
    if found is not None:
        return found
    spellings = {k: k for k in catalog.entities}
    for key, ent in catalog.entities.items():
        spellings.update((syn, key) for syn in ent.synonyms if syn not in spellings)
    suggestions = suggest(name, spellings)
    raise PlanError(
        "unknown_entity",
        f"unknown entity `{name}`",
        hint=did_you_mean(suggestions, catalog.entities, "entities"),
        details=where(path, span, entity=name, suggestions=list(suggestions)),
    )


def entity_of(plan: Plan, env: Env) -> EntitySpec:
    """The plan's entity; rules that run before binding still get a clear refusal.

    Most rules ask: the last answer is kept on the env, for the same written name."""
    if env.entity is not None and env.entity[0] == plan.entity_type:
        return env.entity[1]
    key = resolve_entity(plan.entity_type, env.catalog, "entity_type", plan.span)
    ent = env.catalog.entities[key]
    # Catalogs built in memory may leave `name` empty; errors name the entity by key.
    if ent.name != key:
        ent = ent.model_copy(update={"name": key})
    env.entity = (plan.entity_type, ent)
    return ent


def bind_entity(plan: Plan, env: Env) -> Plan:
    key = resolve_entity(plan.entity_type, env.catalog, "entity_type", plan.span)
    return plan if key == plan.entity_type else plan.model_copy(update={"entity_type": key})


def check_query_type(plan: Plan, env: Env) -> Plan:
    """An entity answers only the query types its catalog entry lists.

    `unknown` passes: it is answered by clarifying, never by a query.
    """
    ent = entity_of(plan, env)
    if not kind_of(plan.query_type).executable or plan.query_type in ent.query_types:
        return plan
    allowed = [q.value for q in ent.query_types]
    raise NotCoveredError(
        "unsupported_query_type",
        f"entity `{ent.name}` does not answer `{plan.query_type.value}` questions",
        hint=f"query types of {ent.name}: {', '.join(allowed)}",
        details=where(
            "query_type",
            plan.span,
            query_type=plan.query_type.value,
            entity=ent.name,
            allowed=allowed,
        ),
    )
