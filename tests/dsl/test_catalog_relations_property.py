"""Property: on any catalog of declared relations, `relation_path` resolves exactly
the declared paths of at most two steps, and every step binds both tenants.

Catalogs are generated (entity names, tables, tenant columns and a random
relation graph), so no rule leans on a deployment's names; the expectation is
computed here from the declarations, not from the resolver.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.dsl.catalog import (
    MAX_HOPS,
    Cardinality,
    CatalogError,
    RelationPathError,
    catalog_from_mapping,
    relation_path,
)

NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])


@st.composite
def catalogs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]]:
    """A raw catalog and, per (entity, relation name), (target, cardinality) as declared."""
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    entities: dict[str, Any] = {
        n: {"table": f"t_{n}", "label": "label", "tenant": f"org_{n[:2]}", "relations": {}}
        for n in names
    }
    expected: dict[tuple[str, str], tuple[str, str]] = {}
    edges = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=8))
    for i, (source, target) in enumerate(edges):
        rname, inverse = f"r{i}", f"inv{i}"
        entities[source]["relations"][rname] = {
            "entity": target,
            "key": f"{target}_ref{i}",
            "inverse": inverse,
        }
        expected[(source, rname)] = (target, Cardinality.MANY_TO_ONE.value)
        expected[(target, inverse)] = (source, Cardinality.ONE_TO_MANY.value)
    return {"entities": entities}, expected


@settings(max_examples=150, deadline=None)
@given(
    catalogs(),
    st.lists(st.sampled_from([f"r{i}" for i in range(8)] + ["inv0", "inv3", "x"]), max_size=3),
    NAMES,
)
def test_only_declared_paths_of_two_steps_resolve(
    generated: tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]],
    names: list[str],
    start: str,
) -> None:
    raw, declared = generated
    catalog = catalog_from_mapping(raw)
    here, want = start, []
    resolvable = start in raw["entities"] and len(names) <= MAX_HOPS
    for name in names if resolvable else ():
        found = declared.get((here, name))
        if found is None:
            resolvable = False
            break
        want.append((here, name, *found))
        here = found[0]
    if not resolvable:
        try:
            relation_path(catalog, start, names)
        except RelationPathError:
            return
        raise AssertionError(f"{start}.{'.'.join(names)} resolved but is not declared")
    steps = relation_path(catalog, start, names)
    assert [(s.source, s.name, s.target, s.cardinality.value) for s in steps] == want
    for s in steps:
        ents = raw["entities"]
        assert s.source_table == ents[s.source]["table"]
        assert s.target_table == ents[s.target]["table"]
        assert (s.source_tenant, s.target_tenant) == (
            ents[s.source]["tenant"],
            ents[s.target]["tenant"],
        )
        # one side of every join is the many-to-one key, the other the target's id
        assert {s.source_column, s.target_column} & {"id"}


@settings(max_examples=60, deadline=None)
@given(catalogs())
def test_default_inverse_names_clash_only_as_a_load_error(
    generated: tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]],
) -> None:
    raw, _declared = generated
    for e in raw["entities"].values():
        for rel in e["relations"].values():
            del rel["inverse"]  # default: the source entity's name
    pairs = [
        (source, rel["entity"])
        for source, e in raw["entities"].items()
        for rel in e["relations"].values()
    ]
    clash = len(pairs) != len(set(pairs))
    try:
        catalog = catalog_from_mapping(raw)
    except CatalogError as exc:
        keys = [p["key"] for p in exc.details["problems"]]
        assert clash and all(k.endswith(".inverse") for k in keys), keys
        return
    assert not clash
    for source, target in pairs:
        (step,) = relation_path(catalog, target, [source])
        assert step.cardinality is Cardinality.ONE_TO_MANY and step.target == source
