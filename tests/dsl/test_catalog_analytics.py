"""Measures, relations, grains and the time zone in the catalog (docs/catalog.md).

Checked on two catalogs of different shape (an insurer's and a project
tracker's), so no rule leans on one deployment's names.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from qdsl.dsl.catalog import (
    Aggregation,
    Cardinality,
    CatalogError,
    Grain,
    RelationPathError,
    catalog_from_mapping,
    demo_catalog,
    load_catalog,
    relation_named,
    relation_path,
)

DEPLOYMENTS = Path(__file__).resolve().parents[1] / "deployments"


def _entity(table: str, **extra: Any) -> dict[str, Any]:
    return {"table": table, "label": "name", "tenant": "org", **extra}


INSURER: dict[str, Any] = {
    "timezone": "Asia/Shanghai",
    "entities": {
        "agent": _entity("agents"),
        "policy": _entity(
            "policies",
            fields={
                "premium": {
                    "column": "premium",
                    "type": "number",
                    "aggregations": ["sum", "avg", "min", "max"],
                },
                "agent_id": {"column": "agent_id", "type": "id"},
                "sold_on": {"column": "sold_on", "type": "date", "grains": ["month", "year"]},
            },
            measures={
                "total_premium": {
                    "field": "premium",
                    "function": "sum",
                    "synonyms": ["总保费", "total premium"],
                },
                "policy_count": {"function": "count"},
                "loss_ratio": {"numerator": "claim.total_loss", "denominator": "total_premium"},
            },
            relations={"agent": {"entity": "agent", "key": "agent_id", "inverse": "policies"}},
        ),
        "claim": _entity(
            "claims",
            fields={
                "loss": {"column": "loss_amount", "type": "number", "aggregations": ["sum"]},
                "policy_id": {"column": "policy_ref", "type": "id"},
                "filed_at": {"column": "filed_at", "type": "datetime", "grains": ["day", "week"]},
            },
            measures={
                "total_loss": {"field": "loss", "function": "sum"},
                "policies_claimed": {"field": "policy_id", "function": "count_distinct"},
            },
            relations={"policy": {"entity": "policy", "key": "policy_id", "synonyms": ["保单"]}},
        ),
    },
}

TRACKER: dict[str, Any] = {
    "entities": {
        "team": _entity("teams", id="team_no", tenant="tenant_id"),
        "project": _entity(
            "projects",
            tenant="tenant_id",
            fields={"budget": {"column": "budget", "type": "number", "aggregations": ["avg"]}},
            relations={"owner": {"entity": "team", "key": "team_no"}},
        ),
        "task": _entity(
            "tasks",
            tenant="tenant_id",
            fields={"hours": {"column": "hours", "type": "number"}},
            relations={"project": {"entity": "project", "key": "project_id", "inverse": "tasks"}},
            measures={"team_budget": {"numerator": "project.owner.x", "denominator": "y"}},
        ),
    },
}


def _tracker() -> dict[str, Any]:
    raw = copy.deepcopy(TRACKER)
    del raw["entities"]["task"]["measures"]
    return raw


def _problems(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(CatalogError) as info:
        catalog_from_mapping(raw, source="t.toml")
    return {p["key"]: p["message"] for p in info.value.details["problems"]}


def test_measures_relations_grains_and_the_zone_load() -> None:
    c = catalog_from_mapping(INSURER)
    assert c.timezone == "Asia/Shanghai" and str(c.zone) == "Asia/Shanghai"
    policy = c.entities["policy"]
    assert policy.fields["premium"].aggregations[0] is Aggregation.SUM
    assert policy.fields["sold_on"].grains == (Grain.MONTH, Grain.YEAR)
    assert policy.measures["total_premium"].name == "total_premium"
    assert policy.measures["loss_ratio"].is_ratio
    assert c.entities["claim"].relations["policy"].synonyms == ("保单",)


def test_the_default_zone_is_utc_and_old_catalogs_stay_valid() -> None:
    assert demo_catalog().timezone == "UTC"
    for path in sorted(DEPLOYMENTS.glob("*/catalog.toml")):
        assert load_catalog(path).entities, path


def test_a_many_to_one_step_carries_both_tables_columns_and_tenants() -> None:
    c = catalog_from_mapping(INSURER)
    (step,) = relation_path(c, "claim", ["policy"])
    assert step.cardinality is Cardinality.MANY_TO_ONE
    assert (step.source_table, step.source_column, step.source_tenant) == (
        "claims",
        "policy_ref",  # the key field's column, not its name
        "org",
    )
    assert (step.target_table, step.target_column, step.target_tenant) == ("policies", "id", "org")


def test_the_inverse_is_derived_one_to_many_and_named_by_inverse_or_the_source() -> None:
    c = catalog_from_mapping(INSURER)
    (claims,) = relation_path(c, "policy", ["claim"])  # no `inverse`: the source's name
    assert claims.cardinality is Cardinality.ONE_TO_MANY
    assert (claims.source_column, claims.target_table, claims.target_column) == (
        "id",
        "claims",
        "policy_ref",
    )
    first, second = relation_path(c, "agent", ["policies", "claim"])
    assert (first.target, second.target) == ("policy", "claim")


def test_paths_of_two_hops_resolve_and_three_are_refused() -> None:
    c = catalog_from_mapping(_tracker())
    steps = relation_path(c, "task", ["project", "owner"])
    assert [s.target for s in steps] == ["project", "team"]
    assert steps[1].target_column == "team_no" and steps[1].target_tenant == "tenant_id"
    with pytest.raises(RelationPathError) as info:
        relation_path(c, "team", ["project", "tasks", "project"])
    assert info.value.subtype == "relation_path_too_long"
    assert info.value.to_dict()["type"] == "validation"


def test_an_undeclared_relation_is_refused_with_the_declared_ones() -> None:
    c = catalog_from_mapping(INSURER)
    with pytest.raises(RelationPathError) as info:
        relation_path(c, "claim", ["polcy"])
    assert info.value.subtype == "unknown_relation"
    assert info.value.hint == "did you mean `policy`?"
    assert info.value.details["relations"] == ["policy"]
    # agent declares nothing to claims: only the declared path exists
    with pytest.raises(RelationPathError):
        relation_path(c, "agent", ["claim"])
    with pytest.raises(RelationPathError) as unknown:
        relation_path(c, "nobody", [])
    assert unknown.value.subtype == "unknown_entity"


def _with(raw: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    *parents, last = path.split(".")
    node = out
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value
    return out


BAD = [
    ("timezone", "Mars/Olympus", "timezone", "IANA"),
    (
        "entities.policy.fields.premium.aggregations",
        ["total"],
        "entities.policy.fields.premium.aggregations.0",
        "sum",
    ),
    (
        "entities.claim.fields.filed_at.aggregations",
        ["sum"],
        "entities.claim.fields.filed_at.aggregations",
        "number field",
    ),
    (
        "entities.claim.fields.loss.aggregations",
        ["count"],
        "entities.claim.fields.loss.aggregations",
        "counts rows",
    ),
    ("entities.claim.fields.loss.grains", ["month"], "entities.claim.fields.loss.grains", "date"),
    (
        "entities.claim.fields.filed_at.grains",
        ["hour"],
        "entities.claim.fields.filed_at.grains.0",
        "",
    ),
    (
        "entities.claim.measures.total_loss",
        {"field": "filed_at", "function": "sum"},
        "entities.claim.measures.total_loss.field",
        "number field",
    ),
    (
        "entities.claim.measures.total_loss",
        {"field": "nothing", "function": "sum"},
        "entities.claim.measures.total_loss.field",
        "no field `nothing`",
    ),
    (
        "entities.claim.measures.total_loss",
        {"field": "loss", "function": "avg"},
        "entities.claim.measures.total_loss.field",
        "allows only sum",
    ),
    (
        "entities.claim.measures.total_loss",
        {"field": "loss"},
        "entities.claim.measures.total_loss",
        "function",
    ),
    (
        "entities.policy.measures.loss_ratio",
        {"numerator": "claims.total_loss", "denominator": "total_premium"},
        "entities.policy.measures.loss_ratio.numerator",
        "no relation `claims`",
    ),
    (
        "entities.policy.measures.loss_ratio",
        {"numerator": "claim.nothing", "denominator": "total_premium"},
        "entities.policy.measures.loss_ratio.numerator",
        "no measure `nothing`",
    ),
    (
        "entities.policy.measures.loss_ratio",
        {"numerator": "claim.total_loss"},
        "entities.policy.measures.loss_ratio",
        "both",
    ),
    (
        "entities.policy.measures.ratio_of_ratio",
        {"numerator": "loss_ratio", "denominator": "total_premium"},
        "entities.policy.measures.ratio_of_ratio.numerator",
        "ratio itself",
    ),
    (
        "entities.claim.relations.policy",
        {"entity": "contract", "key": "policy_id"},
        "entities.claim.relations.policy.entity",
        "no entity `contract`",
    ),
    (
        "entities.claim.relations.policy",
        {"entity": "policy", "key": "filed_at"},
        "entities.claim.relations.policy.key",
        "cannot be a key",
    ),
    (
        "entities.claim.relations.policy",
        {"entity": "policy", "key": "org"},
        "entities.claim.relations.policy.key",
        "tenant",
    ),
    (
        "entities.claim.relations.policy",
        {"entity": "policy", "key": "policy_id", "target_key": "premium"},
        "entities.claim.relations.policy.target_key",
        "target key is an id",
    ),
    (
        "entities.claim.relations.policy",
        {"entity": "policy", "key": "policy_id", "target_key": "nope"},
        "entities.claim.relations.policy.target_key",
        "neither the id",
    ),
    (
        "entities.claim.relations.second",
        {"entity": "policy", "key": "policy_id"},
        "entities.claim.relations.second.inverse",
        "already a relation",
    ),
    (
        "entities.claim.relations.loss",
        {"entity": "policy", "key": "policy_id", "inverse": "claims2"},
        "entities.claim.relations.loss",
        "also a field",
    ),
]


@pytest.mark.parametrize(("path", "value", "key", "words"), BAD, ids=[b[2] for b in BAD])
def test_each_wrong_analytics_key_is_refused_under_its_key(
    path: str, value: Any, key: str, words: str
) -> None:
    problems = _problems(_with(INSURER, path, value))
    assert key in problems, problems
    assert words in problems[key]


def test_a_ratio_part_beyond_two_hops_is_refused() -> None:
    raw = copy.deepcopy(TRACKER)
    raw["entities"]["task"]["measures"] = {
        "far": {"numerator": "project.owner.project.x", "denominator": "hours_sum"},
        "hours_sum": {"field": "hours", "function": "sum"},
    }
    problems = _problems(raw)
    assert "at most 2 steps" in problems["entities.task.measures.far.numerator"]


def test_count_distinct_takes_any_column_and_the_id() -> None:
    raw = _with(
        INSURER,
        "entities.claim.measures.claims_counted",
        {"field": "id", "function": "count_distinct"},
    )
    c = catalog_from_mapping(raw)
    assert c.entities["claim"].measures["claims_counted"].function is Aggregation.COUNT_DISTINCT
    bad = _with(INSURER, "entities.claim.measures.s", {"field": "id", "function": "sum"})
    assert "count_distinct" in _problems(bad)["entities.claim.measures.s.field"]


def test_relation_words_name_one_relation_each_way() -> None:
    c = catalog_from_mapping(
        _with(INSURER, "entities.policy.relations.agent.inverse_synonyms", ["保单", "Policies"])
    )
    assert relation_named(c, "claim", "保单") == "policy"
    assert relation_named(c, "claim", "POLICY") == "policy"  # its own name, any case
    assert relation_named(c, "agent", "policies") == "policies"
    assert relation_named(c, "agent", "claims") is None
    (step,) = relation_path(c, "agent", ["policies"])
    assert step.synonyms == ("保单", "Policies")


def _claims_with(**fields: dict[str, Any]) -> dict[str, Any]:
    """The insurer with more fields on its claims: a rate to multiply the loss by."""
    raw = copy.deepcopy(INSURER)
    raw["entities"]["claim"]["fields"] |= {
        "rate": {"column": "rate", "type": "number"},
        "secret_rate": {"column": "secret_rate", "type": "number", "sensitive": True},
        "noted_rate": {"fact": "noted_rate", "type": "number"},
        "kind": {"column": "kind", "type": "enum", "values": ["fire", "flood"]},
        **fields,
    }
    return raw


def test_a_measure_may_multiply_two_number_fields_whatever_they_allow() -> None:
    # `rate` declares no aggregations and `loss` allows only sum: the product is the
    # deployer's own value, so neither field's list applies to its avg
    for function in ("sum", "avg", "min", "max"):
        raw = _with(
            _claims_with(),
            "entities.claim.measures.weighted_loss",
            {"field": "loss", "times": "rate", "function": function},
        )
        m = catalog_from_mapping(raw).entities["claim"].measures["weighted_loss"]
        assert (m.field, m.times, m.function.value if m.function else None) == (
            "loss",
            "rate",
            function,
        )


PRODUCT_BAD = [
    ({"field": "loss", "times": "rate", "function": "count_distinct"}, "function", "sum"),
    ({"times": "rate", "function": "count"}, "times", "counts rows"),
    ({"field": "loss", "times": "nothing", "function": "sum"}, "times", "no field `nothing`"),
    ({"field": "nothing", "times": "rate", "function": "sum"}, "field", "no field `nothing`"),
    ({"field": "loss", "times": "kind", "function": "sum"}, "times", "number fields"),
    ({"field": "loss", "times": "secret_rate", "function": "sum"}, "times", "sensitive"),
    ({"field": "loss", "times": "noted_rate", "function": "sum"}, "times", "fact field"),
    (
        {"numerator": "total_loss", "denominator": "policies_claimed", "times": "rate"},
        "",
        "`times`",
    ),
]


@pytest.mark.parametrize(("spec", "key", "words"), PRODUCT_BAD, ids=[b[2] for b in PRODUCT_BAD])
def test_a_wrong_product_measure_is_refused_under_its_key(
    spec: dict[str, Any], key: str, words: str
) -> None:
    where = "entities.claim.measures.weighted_loss"
    problems = _problems(_with(_claims_with(), where, spec))
    at = f"{where}.{key}" if key else where
    assert at in problems, problems
    assert words in problems[at]
