"""`qdsl facts load`: validated, normalized like the planner, upserted, all or nothing.

Run on SQLite and PostgreSQL, with the tickets catalog (tests/facts/tickets.py)
and the demo catalog, in databases of their own (`qdsl db upgrade` plus the
deployment's tables), never the shared demo database.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tickets import TICKETS, add_tickets, ticket_database, write_catalog

from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.demo import DEMO_NOW
from qdsl.facts.demo.tables import metadata as demo_tables
from qdsl.facts.demo.tables import projects
from qdsl.facts.load import FactsRejected, load_facts
from qdsl.facts.tables import semantic_facts


@pytest.fixture
def own_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh database: qdsl's tables (db upgrade) and the deployer's tickets table."""
    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'facts.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    upgrade(url)
    eng = make_engine(url)
    ticket_database(eng)
    eng.dispose()
    return url


@pytest.fixture
def own_engine(own_url: str) -> Iterator[sa.Engine]:
    eng = make_engine(own_url)
    yield eng
    eng.dispose()


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _load(url: str, catalog: Path | None, *args: str) -> Result:
    argv = ["--json", "--db", url] + (["--catalog", str(catalog)] if catalog else [])
    return CliRunner().invoke(cli, [*argv, "facts", "load", *args])


def _facts(engine: sa.Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        query = sa.select(semantic_facts).order_by(semantic_facts.c.id)
        return [dict(r) for r in conn.execute(query).mappings()]


def _found(engine: sa.Engine, catalog: Catalog, tenant: str, plan: dict[str, Any]) -> set[str]:
    source = json.dumps({"plan_version": "v1", **plan}, ensure_ascii=False)
    normalized = normalize(load_plan(source), catalog, PlanContext(tenant_id=tenant)).plan
    result = execute(normalized, catalog, engine, tenant, now=DEMO_NOW)
    assert not result.used_fallback  # found by its fact, not by text search
    return {r.entity_id for r in result.rows}


def _exists(field: str, operator: str, value: str, entity: str = "ticket") -> dict[str, Any]:
    return {
        "query_type": "existence",
        "entity_type": entity,
        "filters": [{"field": field, "operator": operator, "value": value}],
    }


def _ticket(tenant: str, no: str, area: str, **extra: Any) -> dict[str, Any]:
    return {
        "tenant_id": tenant,
        "entity_type": "ticket",
        "entity_id": no,
        "predicate": "area",
        "value_text": area,
        **extra,
    }


# -- spellings -------------------------------------------------------------------------

_FULL_WIDTH = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}
WORDS = st.sampled_from(["Billing", "SSO Login", "账单 问题", "港股", "Data-Export", "API 限流"])
SPELLINGS = st.sampled_from(["plain", "upper", "lower", "swap", "full", "spaces", "nfkc"])


def _spell(word: str, how: str) -> str:
    """`word` as users and source systems write it: case, width, blanks, compatibility forms."""
    if how == "upper":
        return word.upper()
    if how == "lower":
        return word.lower()
    if how == "swap":
        return word.swapcase()
    if how == "full":  # full-width letters, digits and punctuation, ideographic space
        return "".join(_FULL_WIDTH.get(c, "\u3000" if c == " " else c) for c in word)
    if how == "spaces":
        return "  " + word.replace(" ", " \t ") + "\n "
    if how == "nfkc":  # compatibility characters NFKC folds: ligature, no-break space
        return word.replace("fi", "\ufb01").replace(" ", "\u00a0").replace("I", "\u2160")
    return word


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(word=WORDS, stored=SPELLINGS, asked=SPELLINGS)
def test_loaded_facts_are_found_by_any_spelling(  # noqa: PLR0917 - fixtures and givens
    own_url: str, own_engine: sa.Engine, tmp_path: Path, word: str, stored: str, asked: str
) -> None:
    tenant = f"acct-{uuid.uuid4().hex[:8]}"
    add_tickets(own_engine, tenant, "T-1", "T-2")
    path = _jsonl(
        tmp_path / f"{tenant}.jsonl",
        [
            _ticket(tenant, "T-1", _spell(word, stored), source_ref="crm:1"),
            _ticket(tenant, "T-2", "unrelated", source_ref="crm:2"),
        ],
    )
    result = _load(own_url, write_catalog(tmp_path), str(path))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"]["inserted"] == 2
    asked_as = _spell(word, asked)
    found = _found(own_engine, TICKETS, tenant, _exists("area", "equals", asked_as))
    assert found == {"T-1"}


def test_alias_spellings_are_found_through_the_catalog(
    own_url: str, own_engine: sa.Engine, tmp_path: Path
) -> None:
    add_tickets(own_engine, "acme", "T-1", "T-2", "T-3")
    rows = [
        _ticket("acme", "T-1", "INVOICES", source_ref="crm:1"),
        _ticket("acme", "T-2", "账单", source_ref="crm:2"),
        _ticket("acme", "T-3", "SSO", source_ref="crm:3"),
    ]
    report = load_facts(rows, engine=own_engine, catalog=TICKETS)
    assert (report.inserted, report.updated) == (3, 0)
    plan = _exists("area", "equals_or_alias", "Billing")
    assert _found(own_engine, TICKETS, "acme", plan) == {"T-1", "T-2"}
    # another tenant sees nothing of acme's facts
    assert _found(own_engine, TICKETS, "globex", plan) == set()


def test_the_demo_catalog_too(own_url: str, own_engine: sa.Engine) -> None:
    with own_engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
        demo_tables.create_all(conn)
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("GRANT SELECT ON projects TO qdsl_reader"))
        conn.execute(
            projects.insert(),
            {"tenant_id": "t9", "id": "1", "title": "x", "status": "active",
             "created_at": DEMO_NOW},
        )
    fact = {"tenant_id": "t9", "entity_type": "project", "entity_id": "1",
            "predicate": "market_theme", "value_text": "沪深Ａ股", "source_ref": "doc:1#p1"}
    load_facts([fact], engine=own_engine, catalog=demo_catalog())
    plan = _exists("market_theme", "equals_or_alias", "a shares", entity="project")
    assert _found(own_engine, demo_catalog(), "t9", plan) == {"1"}


# -- all or nothing --------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_one_bad_row_loads_nothing_and_is_named(
    own_url: str, own_engine: sa.Engine, tmp_path: Path, fmt: str
) -> None:
    good = _ticket("acme", "T-1", "billing", source_ref="crm:1")
    bad = _ticket("acme", "T-2", "sso", source_ref="crm:2", predicate="colour")
    rows = [good, bad, _ticket("acme", "T-3", "api", source_ref="crm:3")]
    if fmt == "jsonl":
        path = _jsonl(tmp_path / "f.jsonl", rows)
    else:
        header = ["tenant_id", "entity_type", "entity_id", "predicate", "value_text", "source_ref"]
        lines = [",".join(header)] + [",".join(str(r[h]) for h in header) for r in rows]
        path = tmp_path / "f.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _load(own_url, write_catalog(tmp_path), str(path))
    assert result.exit_code == 3, result.output
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "validation/facts_rejected"
    line = 2 if fmt == "jsonl" else 3  # a CSV's header is line 1
    assert error["details"]["problems"] == [
        {"line": line, "reason": "predicate 'colour' is not a fact field of ticket "
         "(fact fields: area, priority)"}
    ]
    assert _facts(own_engine) == []


def test_every_bad_row_is_reported(own_engine: sa.Engine) -> None:
    rows: list[Any] = [
        (1, _ticket("acme", "T-1", "billing")),
        (2, "not JSON (Expecting value at column 1)"),
        (3, _ticket("", "T-2", "billing")),
        (4, _ticket("acme", "T-3", "billing", entity_type="invoice")),
        (5, _ticket("acme", "T-4", "billing", confidence=2)),
        (6, _ticket("acme", "T-5", "billing", valid_untill="2026-01-01")),
        (7, {**_ticket("acme", "T-6", "2"), "predicate": "priority", "value_text": "high"}),
        (8, _ticket("acme", "T-7", "  ")),
    ]
    with pytest.raises(FactsRejected) as info:
        load_facts(rows, engine=own_engine, catalog=TICKETS)
    problems = info.value.details["problems"]
    assert [p["line"] for p in problems] == [2, 3, 4, 5, 6, 7, 8]
    reasons = [p["reason"] for p in problems]
    assert reasons[1] == "tenant_id is missing"
    assert reasons[2].startswith("entity_type 'invoice' is not in the catalog")
    assert reasons[3] == "confidence must lie between 0 and 1"
    assert reasons[4].startswith("unknown field(s) valid_untill")
    assert reasons[5] == "priority is a number fact: value_num is missing"
    assert reasons[6] == "value_text is missing"
    assert _facts(own_engine) == []


def test_a_fact_twice_in_one_load_is_rejected(own_engine: sa.Engine) -> None:
    rows = [
        _ticket("acme", "T-1", "Billing", source_ref="crm:1"),
        _ticket("acme", "T-2", "billing", source_ref="crm:1"),
        _ticket("acme", "T-1", "invoices", source_ref="crm:1"),  # a second value: fine
        _ticket("acme", "T-1", " BILLING ", source_ref="crm:1"),  # line 1 again
    ]
    with pytest.raises(FactsRejected) as info:
        load_facts(rows, engine=own_engine, catalog=TICKETS)
    assert info.value.details["problems"] == [
        {"line": 4, "reason": "same fact (tenant, entity, predicate, source_ref and value) "
         "as line 1"}
    ]
    assert _facts(own_engine) == []


# -- idempotence and upsert ------------------------------------------------------------


def test_loading_the_same_file_twice_changes_nothing(
    own_url: str, own_engine: sa.Engine, tmp_path: Path
) -> None:
    rows = [
        _ticket("acme", "T-1", "Billing", source_ref="crm:1", confidence=0.8,
                observed_at="2026-10-01T08:00:00Z", valid_until="2027-01-01"),
        _ticket("acme", "T-2", "SSO"),  # no source_ref, no observed_at
        {**_ticket("globex", "T-1", "3"), "predicate": "priority"},
    ]
    path = _jsonl(tmp_path / "f.jsonl", rows)
    catalog = write_catalog(tmp_path)
    first = _load(own_url, catalog, str(path))
    assert first.exit_code == 0, first.stderr
    before = _facts(own_engine)
    assert len(before) == 3
    again = _load(own_url, catalog, str(path))
    assert json.loads(again.stdout)["data"] == {**json.loads(again.stdout)["data"],
                                               "inserted": 0, "updated": 0, "removed": 0,
                                               "unchanged": 3}
    assert _facts(own_engine) == before
    by_entity = {(r["tenant_id"], r["entity_id"], r["predicate"]): r for r in before}
    billing = by_entity[("acme", "T-1", "area")]
    assert billing["value_text"] == "Billing" and billing["value_norm"] == "billing"
    assert billing["source_type"] == "load" and billing["confidence"] == 0.8
    assert billing["observed_at"].isoformat().startswith("2026-10-01T08:00:00")
    assert by_entity[("globex", "T-1", "priority")]["value_num"] == 3.0


def test_new_provenance_updates_the_fact_in_place(own_engine: sa.Engine) -> None:
    load_facts([_ticket("acme", "T-1", "billing", source_ref="crm:1", confidence=0.5)],
               engine=own_engine, catalog=TICKETS)
    (before,) = _facts(own_engine)
    report = load_facts([_ticket("acme", "T-1", "Billing", source_ref="crm:1", confidence=0.9)],
                        engine=own_engine, catalog=TICKETS)
    assert (report.inserted, report.updated, report.removed) == (0, 1, 0)
    (after,) = _facts(own_engine)
    assert after["id"] == before["id"] and after["value_text"] == "Billing"
    assert after["confidence"] == 0.9
    assert after["observed_at"] == before["observed_at"]  # not given: kept


def test_a_source_restating_its_values_replaces_them(own_engine: sa.Engine) -> None:
    """Rows with one natural key are the set of values that source states now."""
    def areas(*values: str) -> list[dict[str, Any]]:
        return [_ticket("acme", "T-1", v, source_ref="triage:T-1") for v in values]

    load_facts([*areas("billing", "sso"), _ticket("acme", "T-2", "api")],
               engine=own_engine, catalog=TICKETS)
    kept = {r["value_norm"]: r["id"] for r in _facts(own_engine)}
    report = load_facts(areas("SSO", "export"), engine=own_engine, catalog=TICKETS)
    assert (report.removed, report.inserted, report.updated, report.unchanged) == (1, 1, 1, 0)
    after = {r["value_norm"]: r["id"] for r in _facts(own_engine)}
    assert set(after) == {"sso", "export", "api"}  # T-2, another key, untouched
    assert after["sso"] == kept["sso"] and after["api"] == kept["api"]


def test_stdin_stats_and_prune(own_url: str, own_engine: sa.Engine, tmp_path: Path) -> None:
    rows = [
        _ticket("acme", "T-1", "billing", source_ref="a", valid_until="2026-01-01"),
        _ticket("acme", "T-2", "billing", source_ref="b"),
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    catalog = str(write_catalog(tmp_path))
    runner = CliRunner()
    loaded = runner.invoke(
        cli, ["--json", "--db", own_url, "--catalog", catalog, "facts", "load", "-"], input=text
    )
    assert loaded.exit_code == 0, loaded.stderr
    base = ["--json", "--db", own_url, "facts"]
    stats = json.loads(runner.invoke(cli, [*base, "stats", "--now", "2026-06-01"]).stdout)["data"]
    assert stats["groups"] == [{"tenant": "acme", "entity_type": "ticket", "predicate": "area",
                                "rows": 2, "stale": 1, "stale_share": 0.5}]
    pruned = runner.invoke(cli, [*base, "prune", "--stale", "--now", "2026-06-01"])
    assert json.loads(pruned.stdout)["data"]["deleted"] == 1
    assert [r["source_ref"] for r in _facts(own_engine)] == ["b"]


def test_loading_into_a_missing_sqlite_file_creates_nothing(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "f.jsonl", [_ticket("acme", "T-1", "billing")])
    url = f"sqlite:///{tmp_path / 'typo.sqlite3'}"
    result = _load(url, write_catalog(tmp_path), str(path))
    assert result.exit_code == 8
    assert json.loads(result.stderr)["error"]["code"] == "database/database_missing"
    assert not (tmp_path / "typo.sqlite3").exists()


def test_an_export_with_value_norm_loads_with_the_norm_recomputed(own_engine: sa.Engine) -> None:
    row = _ticket("acme", "T-1", "ＢＩＬＬＩＮＧ", source_ref="crm:1", value_norm="BILLING?")
    load_facts([row], engine=own_engine, catalog=TICKETS)
    (stored,) = _facts(own_engine)
    assert stored["value_norm"] == "billing"


def test_the_tickets_deployment_facts_file_loads(tmp_path: Path) -> None:
    """tests/deployments/tickets/facts.jsonl, as a deployer would load it."""
    from deployments.fixtures import TICKETS_CATALOG, TICKETS_DIR, sql_statements

    url = f"sqlite:///{tmp_path / 'desk.sqlite3'}"
    upgrade(url)
    eng = make_engine(url)
    try:
        with eng.begin() as conn:
            for stmt in sql_statements(TICKETS_DIR / "schema.sql"):
                conn.exec_driver_sql(stmt)
        result = _load(url, TICKETS_CATALOG, str(TICKETS_DIR / "facts.jsonl"))
        assert result.exit_code == 0, result.stderr
        lines = [x for x in (TICKETS_DIR / "facts.jsonl").read_text("utf-8").splitlines() if x]
        assert json.loads(result.stdout)["data"]["inserted"] == len(lines) == len(_facts(eng))
    finally:
        eng.dispose()
