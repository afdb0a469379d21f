"""Relations between entities, resolved into join steps (docs/catalog.md, "Relations").

A catalog declares many-to-one relations (`[entities.claim.relations.policy]
entity = "policy", key = "policy_id"`); each one's inverse, one-to-many, is
derived here, named by `inverse` (default: the source entity's name). A plan
names relations, never a table or a column: `relation_path` resolves the
names, refuses an undeclared relation or a path of more than `MAX_HOPS`, and
hands the executor every column it joins on and the tenant column of both
tables, so each table of a path is bound to the caller's tenant.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from qdsl.dsl.catalog.types import Cardinality, Strict
from qdsl.dsl.errors import PlanError
from qdsl.dsl.textnorm import normalize_text

if TYPE_CHECKING:
    from qdsl.dsl.catalog.model import Catalog
    from qdsl.dsl.catalog.specs import EntitySpec, RelationSpec

MAX_HOPS = 2


class RelationPathError(PlanError):
    """A plan named a relation path the catalog does not declare."""


class RelationStep(Strict):
    """One join: rows of `source` to their related rows of `target`, within one tenant
    (`source_table.source_column = target_table.target_column`, and the tenant
    columns of both tables bound to the caller's tenant)."""

    name: str
    cardinality: Cardinality
    source: str
    target: str
    source_table: str
    target_table: str
    source_column: str
    target_column: str
    source_tenant: str
    target_tenant: str
    # Words users write for the relation (its inverse's `inverse_synonyms`).
    synonyms: tuple[str, ...] = ()


def key_column(entity: EntitySpec, name: str) -> str:
    """The column behind a relation key: a declared field's column, else the name."""
    spec = entity.fields.get(name)
    if spec is not None and spec.column is not None:
        return spec.column
    return name


def target_column(target: EntitySpec, rel: RelationSpec) -> str:
    return key_column(target, rel.target_key) if rel.target_key else target.id


def inverse_name(source: str, rel: RelationSpec) -> str:
    return rel.inverse or source


Problems = list[tuple[str, str]]


def relation_table(
    entities: Mapping[str, EntitySpec],
) -> tuple[dict[str, dict[str, RelationStep]], Problems]:
    """Entity -> relation name -> its step, inverses included, and the name clashes.

    Relations whose target is not an entity are left out (the loader reports them).
    """
    table: dict[str, dict[str, RelationStep]] = {name: {} for name in entities}
    problems: Problems = []
    for name, e in entities.items():
        for rname, rel in e.relations.items():
            target = entities.get(rel.entity)
            if target is None:
                continue
            forward = RelationStep(
                name=rname,
                cardinality=Cardinality.MANY_TO_ONE,
                source=name,
                target=rel.entity,
                source_table=e.table,
                target_table=target.table,
                source_column=key_column(e, rel.key),
                target_column=target_column(target, rel),
                source_tenant=e.tenant,
                target_tenant=target.tenant,
                synonyms=rel.synonyms,
            )
            table[name][rname] = forward
    for name, e in entities.items():
        for rname, rel in e.relations.items():
            if rel.entity not in entities:
                continue
            inverse = inverse_name(name, rel)
            forward = table[name][rname]
            key = f"entities.{name}.relations.{rname}"
            if inverse in table[rel.entity]:
                problems.append(
                    (
                        f"{key}.inverse",
                        f"its inverse `{inverse}` is already a relation of `{rel.entity}`; "
                        'name the inverse with `inverse = "..."`',
                    )
                )
                continue
            if inverse in entities[rel.entity].fields:
                problems.append(
                    (
                        f"{key}.inverse",
                        f"its inverse `{inverse}` is a field of `{rel.entity}`; "
                        'name the inverse with `inverse = "..."`',
                    )
                )
                continue
            table[rel.entity][inverse] = RelationStep(
                name=inverse,
                cardinality=Cardinality.ONE_TO_MANY,
                source=rel.entity,
                target=name,
                source_table=forward.target_table,
                target_table=forward.source_table,
                source_column=forward.target_column,
                target_column=forward.source_column,
                source_tenant=forward.target_tenant,
                target_tenant=forward.source_tenant,
                synonyms=rel.inverse_synonyms,
            )
    return table, problems


def relation_path(
    catalog: Catalog, from_entity: str, names: Sequence[str]
) -> tuple[RelationStep, ...]:
    """The join steps of the relations `names`, followed from `from_entity`.

    Refused (`validation/unknown_relation`, `validation/relation_path_too_long`,
    `validation/unknown_entity`) unless every name is a relation declared on the
    entity reached so far (or the derived inverse of one) and the path has at
    most `MAX_HOPS` steps.
    """
    if from_entity not in catalog.entities:
        raise RelationPathError(
            "unknown_entity",
            f"no entity `{from_entity}` in the catalog",
            hint=_did_you_mean(from_entity, catalog.entities),
            details={"entity": from_entity},
        )
    if len(names) > MAX_HOPS:
        raise RelationPathError(
            "relation_path_too_long",
            f"a relation path has at most {MAX_HOPS} steps; `{'.'.join(names)}` has {len(names)}",
            hint="ask across at most two declared relations",
            details={"entity": from_entity, "path": list(names), "max_hops": MAX_HOPS},
        )
    steps: list[RelationStep] = []
    here = from_entity
    for name in names:
        found = catalog.relation_steps.get(here, {})
        step = found.get(name)
        if step is None:
            known = sorted(found)
            raise RelationPathError(
                "unknown_relation",
                f"entity `{here}` has no relation `{name}`",
                hint=_did_you_mean(name, known)
                if known
                else f"the catalog declares no relation of `{here}`",
                details={"entity": here, "relation": name, "relations": known},
            )
        steps.append(step)
        here = step.target
    return tuple(steps)


def rows_path(catalog: Catalog, entity: str, field: str) -> tuple[RelationStep, ...]:
    """The steps of a path of relation names alone (`payments`, `orders.payments`:
    a condition on the related rows themselves), or () when `field` is a field of
    `entity` or a path ending at one. Canonical names only; a path longer than
    MAX_HOPS is still returned (`relation_path` refuses it)."""
    ent = catalog.entities.get(entity)
    names = field.split(".")
    if ent is None or ent.filter_spec(names[0]) is not None:
        return ()
    steps: list[RelationStep] = []
    here = entity
    for name in names:
        step = catalog.relation_steps.get(here, {}).get(name)
        if step is None:
            return ()
        steps.append(step)
        here = step.target
    return tuple(steps)


def relation_named(catalog: Catalog, entity: str, word: str) -> str | None:
    """The relation of `entity` that `word` names (its name or a synonym, any width
    or case), if exactly one does; for planners that read relation words."""
    found = {
        name
        for name, step in catalog.relation_steps.get(entity, {}).items()
        if normalize_text(word) in {normalize_text(w) for w in (name, *step.synonyms)}
    }
    return found.pop() if len(found) == 1 else None


def _did_you_mean(name: str, known: Sequence[str] | Mapping[str, object]) -> str:
    options = sorted(known)
    close = difflib.get_close_matches(name, options, n=1)
    if close:
        return f"did you mean `{close[0]}`?"
    return "one of: " + ", ".join(f"`{o}`" for o in options[:20])
