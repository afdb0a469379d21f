"""The demo data is deterministic, idempotent to seed, and matches its published constants."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, func, select

from qdsl.dsl.bound import alias_set
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.freshness import stale_reason
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import make_engine, tenant_transaction
from qdsl.facts.demo.data import (
    DEMO_NOW,
    DEMO_TENANTS,
    T1_A_SHARE,
    T1_A_SHARE_STALE,
    T1_FAILED_RUNS,
    T1_HK,
    T1_HK_TEXT_ONLY,
    T1_LATEST_FAILED_RUN,
    T1_RUN_12_ERRORS,
    T1_TASKS_OF_64,
    T2_HK,
    T2_US,
    T3_PROJECT_COUNT,
    T3_TASK_COUNT,
    build_demo,
    t3_a_share_ids,
)
from qdsl.facts.demo.setup import ensure_demo, row_counts
from qdsl.facts.demo.tables import DEMO_TABLES
from qdsl.facts.tables import TENANT_TABLES as OWN_TABLES
from qdsl.facts.tables import semantic_facts

TENANT_TABLES = (*DEMO_TABLES, *OWN_TABLES)

DATA = build_demo()
CATALOG = demo_catalog()
THEME = CATALOG.entity("project").fields["market_theme"]
MARKET = THEME.aliases
TOPICS = CATALOG.entity("doc").fields["topic"].aliases


def _rows(table: str, tenant: str) -> list[dict[str, object]]:
    return DATA.rows_for(tenant)[table]


def _theme_ids(tenant: str, canonical: str) -> set[str]:
    norms = set(alias_set(THEME, canonical))  # the executor's own expansion
    return {
        str(r["entity_id"])
        for r in _rows("semantic_facts", tenant)
        if r["predicate"] == "market_theme" and r["value_norm"] in norms
    }


def test_build_is_deterministic() -> None:
    assert build_demo() == DATA


def test_every_row_carries_a_demo_tenant() -> None:
    for rows in DATA.tables.values():
        assert rows and {r["tenant_id"] for r in rows} <= set(DEMO_TENANTS)


def test_market_theme_constants() -> None:
    assert _theme_ids("t1", "A股") == T1_A_SHARE
    assert _theme_ids("t1", "港股") == T1_HK
    assert _theme_ids("t1", "美股") == set()
    assert _theme_ids("t2", "A股") == set()
    assert _theme_ids("t2", "港股") == T2_HK
    assert _theme_ids("t2", "美股") == T2_US
    assert _theme_ids("t3", "A股") == t3_a_share_ids()
    t1_spellings = {
        r["value_text"] for r in _rows("semantic_facts", "t1") if r["entity_id"] in T1_A_SHARE
    }
    assert {"A股", "A-share", "沪深A股"} <= t1_spellings
    t3_spellings = {
        r["value_text"] for r in _rows("semantic_facts", "t3") if r["predicate"] == "market_theme"
    }
    assert t3_spellings == {"A-share", "A shares"}


def test_t2_mentions_no_a_share_anywhere() -> None:
    needles = {normalize_text(s) for s in MARKET["A股"]}
    for table, rows in DATA.rows_for("t2").items():
        if table == "text_grams":
            continue
        for row in rows:
            for value in row.values():
                if isinstance(value, str):
                    assert not any(n in normalize_text(value) for n in needles), (table, row)


def test_stale_and_fresh_facts() -> None:
    facts = _rows("semantic_facts", "t1")
    stale = {
        str(f["entity_id"])
        for f in facts
        if stale_reason(
            valid_until=f["valid_until"],  # type: ignore[arg-type]
            observed_at=f["observed_at"],  # type: ignore[arg-type]
            now=DEMO_NOW,
            window_days=90,
        )
    }
    assert stale == T1_A_SHARE_STALE
    assert any(f["valid_until"] is not None and f["valid_until"] < DEMO_NOW for f in facts)  # type: ignore[operator]


def test_t1_only_text_mentions_hk_for_project_68() -> None:
    p68 = next(r for r in _rows("projects", "t1") if r["id"] == "68")
    assert "港股" in str(p68["summary"])
    assert not T1_HK_TEXT_ONLY & _theme_ids("t1", "港股")


def test_projects_64_and_65_everywhere_and_different() -> None:
    for pid in ("64", "65"):
        versions = {
            tenant: next(r for r in _rows("projects", tenant) if r["id"] == pid)
            for tenant in DEMO_TENANTS
        }
        titles = {v["title"] for v in versions.values()}
        budgets = {v["budget"] for v in versions.values()}
        assert len(titles) == 3 and len(budgets) == 3


def test_tasks_runs_docs() -> None:
    assert {r["id"] for r in _rows("tasks", "t1") if r["project_id"] == "64"} == T1_TASKS_OF_64
    runs = _rows("runs", "t1")
    failed = {r["id"] for r in runs if r["status"] == "failed"}
    assert failed == T1_FAILED_RUNS
    latest = max((r for r in runs if r["status"] == "failed"), key=lambda r: r["started_at"])  # type: ignore[arg-type, return-value]
    assert latest["id"] == T1_LATEST_FAILED_RUN
    errors = [r for r in _rows("semantic_facts", "t1") if r["predicate"] == "error"]
    assert tuple(r["value_text"] for r in errors if r["entity_id"] == "12") == T1_RUN_12_ERRORS
    assert {r["source_ref"] for r in errors if r["entity_id"] == "12"} == {"run:12#log"}
    for tenant in DEMO_TENANTS:
        doc_ids = {r["id"] for r in _rows("docs", tenant)}
        for fact in _rows("semantic_facts", tenant):
            ref = str(fact["source_ref"])
            if ref.startswith("doc:"):
                assert ref.split(":")[1].split("#", maxsplit=1)[0] in doc_ids, ref
            if fact["predicate"] == "topic":
                assert fact["value_text"] in TOPICS
    t1_topics = {
        r["value_text"] for r in _rows("semantic_facts", "t1") if r["predicate"] == "topic"
    }
    assert t1_topics == set(TOPICS)
    t1_bodies = " ".join(str(r["body"]) for r in _rows("docs", "t1"))
    assert "架构" in t1_bodies and "architecture" in t1_bodies.lower()


def test_t3_is_large() -> None:
    projects = _rows("projects", "t3")
    assert len(projects) == T3_PROJECT_COUNT
    assert len(_rows("tasks", "t3")) == T3_TASK_COUNT
    default = [{"id": p["id"], "title": p["title"], "status": p["status"]} for p in projects]
    assert len(json.dumps(default[:200], ensure_ascii=False).encode()) > 24 * 1024
    full = [{**d, "summary": p["summary"]} for d, p in zip(default, projects, strict=True)]
    assert len(json.dumps(full, ensure_ascii=False).encode()) > 4 * 24 * 1024


def test_text_grams_cover_every_text_search_entity() -> None:
    for entity, spec in CATALOG.entities.items():
        for tenant in DEMO_TENANTS:
            ids = {r[spec.id] for r in _rows(spec.table, tenant)}
            indexed = {
                r["entity_id"] for r in _rows("text_grams", tenant) if r["entity_type"] == entity
            }
            assert ids == indexed, (entity, tenant)


def _dump(engine: Engine) -> dict[str, list[tuple[object, ...]]]:
    out = {}
    for tenant in DEMO_TENANTS:
        with tenant_transaction(engine, tenant) as conn:
            for t in TENANT_TABLES:
                rows = conn.execute(
                    select(t).where(t.c.tenant_id == tenant).order_by(*t.primary_key.columns)
                ).all()
                out[f"{tenant}.{t.name}"] = [tuple(r) for r in rows]
    return out


def test_seeding_twice_is_a_no_op_and_two_databases_are_equal(tmp_path: Path) -> None:
    a, b = (f"sqlite:///{tmp_path / n}" for n in ("a.sqlite3", "b.sqlite3"))
    first = ensure_demo(a, count_rows=True)
    assert first.seeded_tenants == DEMO_TENANTS
    assert sum(first.rows.values()) == DATA.total_rows()
    again = ensure_demo(a, count_rows=True)
    assert again.seeded_tenants == ()
    assert again.rows == first.rows
    ensure_demo(b)
    ea, eb = make_engine(a), make_engine(b)
    try:
        assert _dump(ea) == _dump(eb)  # fact ids included
    finally:
        ea.dispose()
        eb.dispose()


def test_ensure_demo_is_idempotent_on_the_session_database(engine: Engine, db_url: str) -> None:
    before = row_counts(engine)
    assert ensure_demo(db_url).seeded_tenants == ()
    assert row_counts(engine) == before
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(semantic_facts)).scalar_one() == len(
            DATA.tables["semantic_facts"]
        )
