"""Catalog keys for reading questions: id_pattern, default_for, link_values."""

from __future__ import annotations

from typing import Any

import pytest

from qdsl.dsl.catalog import CatalogError, catalog_from_mapping, demo_catalog
from qdsl.dsl.ir import QueryType


def _catalog(**entity: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "table": "tickets",
        "label": "subject",
        "query_types": ["existence", "count", "list", "status", "explain"],
        "fields": {"assignee": {"column": "assignee", "type": "text", "link_values": True}},
    }
    return {"entities": {"ticket": {**base, **entity}}}


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(CatalogError) as err:
        catalog_from_mapping(raw)
    return [p["key"] for p in err.value.details["problems"]]


def test_id_pattern_and_default_for_load() -> None:
    cat = catalog_from_mapping(_catalog(id_pattern=r"TCK-\d+", default_for=["explain"]))
    ticket = cat.entity("ticket")
    assert ticket.id_regex is not None and ticket.id_regex.fullmatch("TCK-7")
    assert cat.default_entity(QueryType.EXPLAIN) == "ticket"
    assert cat.default_entity(QueryType.DIAGNOSE) is None
    assert ticket.fields["assignee"].link_values


def test_bad_keys_are_each_reported() -> None:
    raw = _catalog(id_pattern="(", default_for=["diagnose"])
    raw["entities"]["ticket"]["fields"]["secret"] = {
        "column": "secret", "type": "text", "link_values": True, "sensitive": True,
    }
    raw["entities"]["ticket"]["fields"]["score"] = {
        "column": "score", "type": "number", "link_values": True,
    }
    assert sorted(_problems(raw)) == [
        "entities.ticket.default_for",
        "entities.ticket.fields.score.link_values",
        "entities.ticket.fields.secret.link_values",
        "entities.ticket.id_pattern",
    ]


def test_an_id_pattern_matching_nothing_typed_is_refused() -> None:
    assert _problems(_catalog(id_pattern=r"\d*")) == ["entities.ticket.id_pattern"]


def test_two_defaults_for_one_query_type_are_refused() -> None:
    raw = _catalog(default_for=["explain"])
    raw["entities"]["note"] = {**raw["entities"]["ticket"], "table": "notes"}
    assert _problems(raw) == ["entities.note.default_for"]


def test_the_demo_declares_its_defaults_in_the_catalog() -> None:
    cat = demo_catalog()
    assert cat.default_entity(QueryType.EXPLAIN) is not None
    assert cat.default_entity(QueryType.DIAGNOSE) is not None


def test_updated_at_names_a_time_column() -> None:
    raw = _catalog(updated_at="modified_at")
    assert catalog_from_mapping(raw).entity("ticket").updated_at == "modified_at"
    fields = raw["entities"]["ticket"]["fields"]
    fields["modified_at"] = {"column": "modified_at", "type": "datetime"}
    assert catalog_from_mapping(raw).entity("ticket").updated_at == "modified_at"
    for bad in ("", "id", "tenant_id", "assignee"):
        assert _problems(_catalog(updated_at=bad)) == ["entities.ticket.updated_at"], bad
    fact = _catalog(updated_at="seen")
    fact["entities"]["ticket"]["fields"]["seen"] = {"fact": "seen"}
    assert _problems(fact) == ["entities.ticket.updated_at"]
