"""`[scope]`: what a plan's project scope names, checked when the catalog loads."""

from __future__ import annotations

from typing import Any

import pytest

from qdsl.dsl.catalog import CatalogError, catalog_from_mapping, demo_catalog


def _ref(target: str, **more: Any) -> dict[str, Any]:
    return {"column": f"{target}_id", "type": "id", "references": target, **more}


def _raw(scope: dict[str, Any] | None, **order_fields: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "entities": {
            "team": {"table": "teams", "label": "name"},
            "order": {"table": "orders", "label": "title", "fields": order_fields},
            "note": {"table": "notes", "label": "text"},
        }
    }
    if scope is not None:
        raw["scope"] = scope
    return raw


def _problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(CatalogError) as err:
        catalog_from_mapping(raw)
    return [(p["key"], p["message"]) for p in err.value.details["problems"]]


def test_the_scope_names_each_entitys_field() -> None:
    cat = catalog_from_mapping(_raw({"entity": "team"}, team_id=_ref("team")))
    assert cat.scope_field("team") == "id"  # the scope's own entity: by its id
    assert cat.scope_field("order") == "team_id"  # its one field referencing team
    assert cat.scope_field("note") is None  # nothing ties a note to a team


def test_without_a_scope_nothing_is_scoped() -> None:
    cat = catalog_from_mapping(_raw(None, team_id=_ref("team")))
    assert cat.scope is None and cat.scope_field("order") is None


def test_the_demo_scopes_by_project() -> None:
    cat = demo_catalog()
    assert cat.scope is not None and cat.scope.entity == "project"
    scoped = {e: cat.scope_field(e) for e in cat.entities}
    assert scoped == {
        "project": "id",
        "task": "project_id",
        "doc": None,
        "run": "project_id",
        "signal": "project_id",
        "user": None,
        "config": None,
    }


def test_an_unknown_scope_entity_is_refused() -> None:
    assert _problems(_raw({"entity": "teem"})) == [("scope.entity", "no entity `teem`")]


def test_two_fields_referencing_the_scope_must_be_told_apart() -> None:
    fields = {"team_id": _ref("team"), "owner_team_id": _ref("team", column="owner_team")}
    assert _problems(_raw({"entity": "team"}, **fields)) == [
        ("scope.fields.order", "`order` references `team` by team_id, owner_team_id: name one")
    ]
    scope = {"entity": "team", "fields": {"order": "team_id"}}
    chosen = catalog_from_mapping(_raw(scope, **fields))
    assert chosen.scope_field("order") == "team_id"


def test_a_named_field_must_reference_the_scope() -> None:
    raw = _raw({"entity": "team", "fields": {"order": "title", "nothing": "x"}})
    assert _problems(raw) == [
        ("scope.fields.order", "`title` is not an id column field referencing `team`"),
        ("scope.fields.nothing", "no entity `nothing`"),
    ]


def test_a_sensitive_field_never_scopes() -> None:
    raw = _raw({"entity": "team"}, team_id=_ref("team", sensitive=True))
    assert _problems(raw) == [("scope.fields.order", "`team_id` is sensitive and cannot scope")]
