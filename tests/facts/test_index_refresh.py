"""`refresh_index` / `qdsl index refresh` over a deployer's own tables, SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from shipping import SHIPMENTS, T0, catalog, insert, shipment
from sqlalchemy import Engine

from qdsl.cli.main import cli
from qdsl.dsl.errors import UsageError
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.json_form import parse_json
from qdsl.executor.run import execute
from qdsl.facts.index_findings import index_findings
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.tables import text_grams, value_index

CAT = catalog()
BODY = "冷链车运输，含锂电池，需防潮"  # 锂 (1), 电池 (2), 冷链车 (3 characters)


def _found(engine: Engine, term: str, tenant: str = "acme") -> set[str]:
    plan = normalize(
        parse_json(
            {
                "query_type": "list",
                "entity_type": "shipment",
                "filters": [{"field": "cargo", "operator": "equals", "value": term}],
                "retrieval_policy": {"facts_first": True, "allow_fallback_text": True},
            }
        ),
        CAT,
        PlanContext(tenant_id=tenant),
    ).plan
    result = execute(plan, CAT, engine, tenant)
    return {r.entity_id for r in result.rows}


def _snapshot(engine: Engine) -> tuple[list[Any], list[Any]]:
    with engine.connect() as conn:
        grams = conn.execute(sa.select(text_grams).order_by(*text_grams.primary_key)).all()
        values = conn.execute(sa.select(value_index).order_by(*value_index.primary_key)).all()
    return grams, values


def _seed(engine: Engine) -> None:
    insert(
        engine,
        [
            shipment("acme", "SH-1", body=BODY, carrier="顺丰", city="深圳"),
            shipment("acme", "SH-2", body="普通纸箱", carrier="DHL", city="Hamburg"),
            shipment("zeta", "SH-1", body="电池 only here", carrier="UPS"),
        ],
    )


@pytest.mark.parametrize("term", ["锂", "电池", "冷链车"])
def test_fallback_finds_the_deployers_text_only_after_refresh(ship: Engine, term: str) -> None:
    _seed(ship)
    assert _found(ship, term) == set()
    report = refresh_index(ship, CAT)
    assert report.changed
    assert _found(ship, term) == {"SH-1"}


def test_refresh_twice_changes_nothing(ship: Engine) -> None:
    _seed(ship)
    first = refresh_index(ship, CAT)
    before = _snapshot(ship)
    second = refresh_index(ship, CAT)
    assert not second.changed
    assert all(e.entities_changed == 0 for e in second.entities)
    assert _snapshot(ship) == before
    shipments = next(e for e in first.entities if e.entity == "shipment")
    assert (shipments.tenants, shipments.rows, shipments.entities_changed) == (2, 3, 3)
    # the depot has no text_search columns, but its label links (names ask for depots)
    assert first.skipped == ()
    assert any(e.entity == "depot" for e in first.entities)


def test_since_reads_changed_rows_only(ship: Engine) -> None:
    _seed(ship)
    refresh_index(ship, CAT)
    later = T0 + timedelta(days=3)
    with ship.begin() as conn:
        # SH-2 changes and says so; zeta's SH-1 changes its text without a new time.
        conn.execute(
            SHIPMENTS.update()
            .where(SHIPMENTS.c.org == "acme", SHIPMENTS.c.ship_no == "SH-2")
            .values(body="干冰 冷链车", modified=later)
        )
        conn.execute(
            SHIPMENTS.update().where(SHIPMENTS.c.org == "zeta").values(body="冷链车 quietly")
        )
    report = refresh_index(ship, CAT, since=later - timedelta(hours=1))
    (done,) = report.entities
    assert (done.tenants, done.rows, done.entities_changed) == (1, 1, 1)
    assert _found(ship, "冷链车") == {"SH-1", "SH-2"}
    assert _found(ship, "冷链车", tenant="zeta") == set()  # unchanged time: not read
    refresh_index(ship, CAT)
    assert _found(ship, "冷链车", tenant="zeta") == {"SH-1"}


def test_full_refresh_drops_the_index_of_deleted_rows(ship: Engine) -> None:
    _seed(ship)
    refresh_index(ship, CAT)
    with ship.begin() as conn:
        conn.execute(SHIPMENTS.delete().where(SHIPMENTS.c.org == "acme"))
    report = refresh_index(ship, CAT, entity="shipment")
    assert report.entities[0].grams_removed > 0
    assert _found(ship, "电池") == set()
    with ship.connect() as conn:
        tenants = set(conn.execute(sa.select(text_grams.c.tenant_id).distinct()).scalars())
        values = set(conn.execute(sa.select(value_index.c.tenant_id).distinct()).scalars())
    assert tenants == values == {"zeta"}


def test_refresh_of_named_tenants_only(ship: Engine) -> None:
    _seed(ship)
    report = refresh_index(ship, CAT, tenants=["zeta"])
    assert report.entities[0].tenants == 1
    assert _found(ship, "电池") == set()
    assert _found(ship, "电池", tenant="zeta") == {"SH-1"}


def test_bad_arguments_are_usage_errors(ship: Engine) -> None:
    with pytest.raises(UsageError) as err:
        refresh_index(ship, CAT, entity="shipmnt")
    assert err.value.subtype == "unknown_entity" and '"shipment"' in (err.value.hint or "")
    with pytest.raises(UsageError) as err:
        refresh_index(ship, CAT, entity="depot", since=T0)
    assert err.value.subtype == "no_update_column"


def test_findings_name_a_missing_then_a_stale_index(ship: Engine) -> None:
    _seed(ship)
    missing = index_findings(ship, CAT)
    text = {(f.tenant, f.code, f.level) for f in missing if f.index == "text"}
    assert text == {("acme", "index_missing", "error"), ("zeta", "index_missing", "error")}
    assert {f.code for f in missing if f.index == "values"} == {"values_missing"}
    assert all(f.fix == "qdsl index refresh --entity shipment" for f in missing)
    refresh_index(ship, CAT)
    assert index_findings(ship, CAT) == ()
    insert(ship, [shipment("acme", "SH-9", modified=T0 + timedelta(days=1))])
    stale = index_findings(ship, CAT)
    assert {(f.tenant, f.index, f.code) for f in stale} == {
        ("acme", "text", "index_stale"),
        ("acme", "values", "values_stale"),
    }


def test_cli_refresh_prints_the_report(ship_db: tuple[str, Engine], tmp_path: Path) -> None:
    url, engine = ship_db
    from shipping import wipe

    wipe(engine)
    _seed(engine)
    path = tmp_path / "shipping.toml"
    from shipping import CATALOG_TOML

    path.write_text(CATALOG_TOML, encoding="utf-8")
    args = ["--json", "--db", url, "--catalog", str(path), "index", "refresh"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.stderr
    env = json.loads(first.stdout)
    assert env["ok"] and env["operation"] == "index refresh" and env["data"]["changed"]
    again = json.loads(CliRunner().invoke(cli, args).stdout)
    assert again["data"]["changed"] is False
    since = CliRunner().invoke(cli, [*args, "--since", "2030-01-01", "--entity", "shipment"])
    assert json.loads(since.stdout)["data"]["entities"][0]["rows"] == 0
    bad = CliRunner().invoke(cli, [*args, "--entity", "depot", "--since", "2026-01-01"])
    assert bad.exit_code == 2
    assert json.loads(bad.stderr)["error"]["subtype"] == "no_update_column"
    assert CliRunner().invoke(cli, [*args, "--since", "soon"]).exit_code == 2
    assert CliRunner().invoke(cli, [*args, "--tenant", " "]).exit_code == 2


def test_on_the_demo_refresh_agrees_with_the_seeded_index(tmp_path: Path) -> None:
    """The demo seeds text_grams itself: a refresh must find nothing to change."""
    from qdsl.dsl.catalog import demo_catalog
    from qdsl.dsl.linking import LinkedValue
    from qdsl.facts.db import make_engine
    from qdsl.facts.demo.setup import ensure_demo
    from qdsl.facts.value_index import forget, value_source_for

    url = f"sqlite+pysqlite:///{tmp_path / 'demo.sqlite3'}"
    ensure_demo(url)
    engine = make_engine(url)
    try:
        demo = demo_catalog()
        assert {f.code for f in index_findings(engine, demo)} == {
            "index_unrecorded",
            "values_missing",
        }
        report = refresh_index(engine, demo)
        assert all(e.grams_added == e.grams_removed == 0 for e in report.entities)
        assert index_findings(engine, demo) == ()
        forget(engine)
        values = value_source_for(engine, demo).values_for("t1")
        assert LinkedValue("task", "assignee", "Li Wei") in values["li wei"]
    finally:
        engine.dispose()


def test_catalog_check_checks_the_updated_at_column(ship: Engine) -> None:
    import tomllib

    from shipping import CATALOG_TOML, SHIPMENTS, shipment

    from qdsl.dsl.catalog import catalog_from_mapping
    from qdsl.facts.check import check_catalog

    def updated_at_findings(column: str) -> list[str]:
        raw = tomllib.loads(CATALOG_TOML)
        raw["entities"]["shipment"]["updated_at"] = column
        raw["entities"]["shipment"]["fields"].pop("city")  # a column the catalog does not type
        report = check_catalog(ship, catalog_from_mapping(raw))
        return [f.message for f in report.findings if "updated_at" in f.message]

    with ship.begin() as conn:
        # a row: on SQLite a text column is told from a time by its values
        conn.execute(SHIPMENTS.insert(), [shipment("acme", "S-1", city="Shanghai")])
    assert updated_at_findings("modified") == []
    (missing,) = updated_at_findings("modfied")
    assert "'modfied'" in missing
    (wrong_type,) = updated_at_findings("city")
    assert "shipments.city" in wrong_type
