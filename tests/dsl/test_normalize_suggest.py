"""did-you-mean suggestions and the shape of the default rules tuple."""

from __future__ import annotations

from qdsl.dsl.normalize import DEFAULT_RULES
from qdsl.dsl.suggest import did_you_mean, suggest


def test_suggest_is_case_and_width_insensitive_and_keeps_catalog_spelling() -> None:
    assert suggest("STAUTS", ["status", "title"]) == ("status",)
    assert suggest("ｐｒｏｊｃｅｔ", ["project", "task"]) == ("project",)


def test_suggest_maps_spellings_to_targets_without_repeats() -> None:
    spellings = {"project": "project", "projects": "project", "项目": "project", "task": "task"}
    assert suggest("projets", spellings) == ("project",)


def test_suggest_limits_and_orders_by_closeness() -> None:
    names = ["created_at", "created_by", "created_on", "creator", "updated_at"]
    assert suggest("created_at", names) == ("created_at", "created_on", "created_by")
    assert suggest("created_at", names, n=1) == ("created_at",)
    assert suggest("zzz", names) == ()


def test_did_you_mean_hint_or_known_names() -> None:
    assert did_you_mean(("status",), ["status"], "fields") == 'did you mean "status"?'
    assert did_you_mean((), ["b", "a", "a"], "fields") == "known fields: a, b"
    assert did_you_mean((), [], "sort fields") == "there are no sort fields"


def test_default_rules_are_named_and_ordered() -> None:
    assert [r.__name__ for r in DEFAULT_RULES] == [
        "bind_tenant",
        "bind_entity",
        "check_query_type",
        "bind_contract",
        "merge_context",
        "cleanse_sensitive",
        "bind_filters",
        "bind_scope",
        "check_values",
        "normalize_values",
        "bind_projection",
        "bind_measure",
        "bind_grouping",
        "bind_sort",
        "fill_limit",
        "fill_retrieval_policy",
        "fill_verifier_checks",
    ]
