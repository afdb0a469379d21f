"""Execution against the demo data on SQLite and PostgreSQL (the `engine` fixture)."""

from __future__ import annotations

import asyncio

import pytest
from exec_support import CATALOG, NOW, sample_plan
from sqlalchemy import Engine

from qdsl.dsl.errors import PolicyError
from qdsl.dsl.ir import Filter, ObjectRef, Operator, Plan, QueryType, RetrievalPolicy, Scope
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import aexecute, execute
from qdsl.facts.db import make_async_engine
from qdsl.facts.demo.data import T1_A_SHARE, T1_A_SHARE_FRESH, T1_HK_TEXT_ONLY, T1_RUN_12_ERRORS


def theme(value: str, **policy: object) -> Plan:
    return Plan(
        query_type=QueryType.EXISTENCE,
        entity_type="project",
        filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value=value),),
        retrieval_policy=RetrievalPolicy(**policy),  # type: ignore[arg-type]
    )


def ids(result: ExecutionResult) -> set[str]:
    return {r.entity_id for r in result.rows}


def test_a_share_existence_with_fact_evidence(engine: Engine) -> None:
    result = execute(theme("A股"), CATALOG, engine, "t1", now=NOW)
    assert ids(result) == T1_A_SHARE
    assert result.retrieval == "facts" and not result.used_fallback
    assert result.baseline_total == 14
    evidence = result.evidence_by_id()
    for row in result.rows:
        facts = [evidence[e] for e in row.evidence_ids if e.startswith("fact:")]
        assert facts, row.entity_id
        for ev in facts:
            assert ev.kind == "fact" and ev.predicate == "market_theme"
            assert ev.entity_id == row.entity_id and ev.tenant_id == "t1"
            assert ev.execution_id == result.execution_id
            assert ev.source_ref


def test_alias_spellings_find_the_same_projects(engine: Engine) -> None:
    canonical = ids(execute(theme("A股"), CATALOG, engine, "t1", now=NOW))
    assert ids(execute(theme("A-share"), CATALOG, engine, "t1", now=NOW)) == canonical
    assert ids(execute(theme("沪深A股"), CATALOG, engine, "t1", now=NOW)) == canonical


def test_tenant_without_a_share_gets_none(engine: Engine) -> None:
    result = execute(theme("A股", allow_fallback_text=True), CATALOG, engine, "t2", now=NOW)
    assert result.rows == () and result.evidence == ()
    assert result.baseline_total == 7  # the guard is read, the answer is still "none"


def test_freshness_drops_stale_facts(engine: Engine) -> None:
    plan = theme("A股", require_fresh_fact=True, freshness_days=90)
    assert ids(execute(plan, CATALOG, engine, "t1", now=NOW)) == T1_A_SHARE_FRESH


def test_text_fallback_hits_are_marked(engine: Engine) -> None:
    plan = theme("港股", facts_first=False, allow_fallback_text=True)
    result = execute(plan, CATALOG, engine, "t1", now=NOW)
    assert result.used_fallback and result.retrieval == "fallback_text"
    assert ids(result) >= T1_HK_TEXT_ONLY
    for row in result.rows:
        (ev,) = [result.evidence_by_id()[e] for e in row.evidence_ids]
        assert ev.kind == "text" and ev.fallback and ev.id == f"project:{row.entity_id}"


def test_fallback_only_when_facts_found_nothing(engine: Engine) -> None:
    result = execute(theme("港股", allow_fallback_text=True), CATALOG, engine, "t1", now=NOW)
    assert not result.used_fallback
    assert not (T1_HK_TEXT_ONLY & ids(result))


def test_list_truncates_at_limit_and_counts_all(engine: Engine) -> None:
    plan = Plan(query_type=QueryType.LIST, entity_type="project", limit=25)
    result = execute(plan, CATALOG, engine, "t3", now=NOW)
    assert len(result.rows) == 25 and result.truncated
    assert result.count == 300
    assert result.baseline_total is None  # no filters, nothing to guard


def test_count(engine: Engine) -> None:
    plan = Plan(
        query_type=QueryType.COUNT,
        entity_type="project",
        filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),),
    )
    result = execute(plan, CATALOG, engine, "t1", now=NOW)
    assert result.count == len(T1_A_SHARE)
    assert result.baseline_total == 14


def test_status_snapshot_with_facts(engine: Engine) -> None:
    plan = Plan(
        query_type=QueryType.STATUS,
        entity_type="project",
        scope=Scope(referenced_objects=(ObjectRef(entity_type="project", id="64"),)),
    )
    per_tenant = {t: execute(plan, CATALOG, engine, t, now=NOW) for t in ("t1", "t2", "t3")}
    for tenant, result in per_tenant.items():
        (row,) = result.rows
        assert row.entity_id == "64" and row.tenant_id == tenant
        assert {"status", "budget", "title"} <= set(row.values)
        assert "owner_email" not in row.values
    labels = {r.rows[0].label for r in per_tenant.values()}
    assert len(labels) == 3  # same id, three different projects


def test_compare_two_projects(engine: Engine) -> None:
    plan = sample_plan("project", QueryType.COMPARE)
    result = execute(plan, CATALOG, engine, "t1", now=NOW)
    assert ids(result) == {"64", "65"}
    assert all(r.facts.get("market_theme") for r in result.rows)


def test_diagnose_reads_error_facts(engine: Engine) -> None:
    plan = Plan(
        query_type=QueryType.DIAGNOSE,
        entity_type="run",
        scope=Scope(referenced_objects=(ObjectRef(entity_type="run", id="12"),)),
    )
    result = execute(plan, CATALOG, engine, "t1", now=NOW)
    (row,) = result.rows
    errors = {
        result.evidence_by_id()[e].value_text
        for e in row.evidence_ids
        if e.startswith("fact:") and result.evidence_by_id()[e].predicate == "error"
    }
    assert errors == set(T1_RUN_12_ERRORS)


def test_explain_cites_doc_passages(engine: Engine) -> None:
    plan = Plan(
        query_type=QueryType.EXPLAIN,
        entity_type="doc",
        filters=(Filter(field="topic", operator=Operator.EQUALS_OR_ALIAS, value="架构"),),
    )
    result = execute(plan, CATALOG, engine, "t1", now=NOW)
    assert result.rows
    for row in result.rows:
        assert row.values["body"]
        refs = [
            result.evidence_by_id()[e].source_ref for e in row.evidence_ids if e.startswith("fact:")
        ]
        assert any(r and r.startswith(f"doc:{row.entity_id}") for r in refs), refs


def test_tenant_mismatch_is_refused(engine: Engine) -> None:
    plan = theme("A股").model_copy(update={"scope": Scope(tenant_id="t2")})
    with pytest.raises(PolicyError) as info:
        execute(plan, CATALOG, engine, "t1", now=NOW)
    assert info.value.subtype == "tenant_scope_mismatch"


def test_async_twin_refuses_a_tenant_mismatch_too(db_url: str) -> None:
    plan = theme("A股").model_copy(update={"scope": Scope(tenant_id="t2")})

    async def run() -> None:
        aengine = make_async_engine(db_url)
        try:
            await aexecute(plan, CATALOG, aengine, "t1", now=NOW)
        finally:
            await aengine.dispose()

    with pytest.raises(PolicyError) as info:
        asyncio.run(run())
    assert info.value.subtype == "tenant_scope_mismatch"


def test_async_twin_gives_the_same_result(engine: Engine, db_url: str) -> None:
    plans = [
        theme("A股"),
        sample_plan("project", QueryType.COMPARE),
        sample_plan("run", QueryType.DIAGNOSE),
    ]

    async def run_all() -> list[ExecutionResult]:
        aengine = make_async_engine(db_url)
        try:
            return [await aexecute(p, CATALOG, aengine, "t1", now=NOW) for p in plans]
        finally:
            await aengine.dispose()

    for sync_result, async_result in zip(
        [execute(p, CATALOG, engine, "t1", now=NOW) for p in plans],
        asyncio.run(run_all()),
        strict=True,
    ):
        assert async_result.rows == sync_result.rows
        assert async_result.count == sync_result.count
        assert [e.id for e in async_result.evidence] == [e.id for e in sync_result.evidence]
        assert async_result.execution_id != sync_result.execution_id


def _fallback_summary(result: ExecutionResult) -> tuple[object, ...]:
    evidence = result.evidence_by_id()
    labels = {r.entity_id: evidence[f"project:{r.entity_id}"].value_text for r in result.rows}
    return [r.entity_id for r in result.rows], labels, result.count, result.truncated


_HK_SPELLINGS = (
    "港股",
    "h股",
    "hong kong equities",
    "hong kong stocks",
    "hk equities",
    "hk stocks",
    "香港股票",
)


def _projects_containing(engine: Engine, tenant: str, spellings: tuple[str, ...]) -> set[str]:
    """The plain-Python meaning of the text fallback: a title or summary contains one."""
    import sqlalchemy as sa

    from qdsl.dsl.textnorm import normalize_text
    from qdsl.facts.demo.tables import projects

    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(projects.c.id, projects.c.title, projects.c.summary).where(
                projects.c.tenant_id == tenant
            )
        ).all()
    return {
        r.id
        for r in rows
        if any(s in normalize_text(t or "") for t in (r.title, r.summary) for s in spellings)
    }


def test_fallback_searches_every_spelling_in_one_statement(engine: Engine) -> None:
    import sqlalchemy as sa

    ran: list[str] = []

    def note(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        ran.append(statement)

    plan = theme("港股", facts_first=False, allow_fallback_text=True)
    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        result = execute(plan, CATALOG, engine, "t1", now=NOW)
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)
    assert result.used_fallback and ids(result) >= T1_HK_TEXT_ONLY
    assert ids(result) == _projects_containing(engine, "t1", _HK_SPELLINGS)
    # 7 spellings of 港股, one statement (plus PRAGMAs / the session settings)
    assert sum("text_grams" in s for s in ran) == 1
    assert any("7 spelling(s) in 1 statement(s)" in n for n in result.notes)
    # each hit names the spelling that found it
    evidence = result.evidence_by_id()
    for row in result.rows:
        label = evidence[f"project:{row.entity_id}"].value_text
        assert label in _HK_SPELLINGS
        assert ids(result) & _projects_containing(engine, "t1", (label,)) >= {row.entity_id}


@pytest.mark.parametrize("query_type", [QueryType.EXISTENCE, QueryType.COUNT])
def test_fallback_over_several_runs_gives_the_same_answer(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, query_type: QueryType
) -> None:
    """Values with more spellings than slots take several runs of the statement."""
    from qdsl.executor import compile as compile_mod
    from qdsl.executor import fallback_sql
    from qdsl.executor import statements as statements_mod

    plan = theme("港股", facts_first=False, allow_fallback_text=True).model_copy(
        update={"query_type": query_type, "limit": 2}
    )
    one = execute(plan, CATALOG, engine, "t1", now=NOW)
    monkeypatch.setattr(fallback_sql, "FALLBACK_SLOTS", 2)
    monkeypatch.setattr(compile_mod, "FALLBACK_SLOTS", 2)
    statements_mod.STATEMENTS.clear()
    try:
        several = execute(plan, CATALOG, engine, "t1", now=NOW)
    finally:
        statements_mod.STATEMENTS.clear()
    assert any("in 4 statement(s)" in n for n in several.notes)
    assert one.used_fallback
    if query_type is QueryType.COUNT:
        # a count plan has no limit: the binder (the normalizer) drops it
        assert not one.truncated and len(one.rows) > 2
    else:
        assert one.truncated and len(one.rows) == 2
    assert _fallback_summary(several) == _fallback_summary(one)


def test_empty_answer_carries_the_baseline_in_its_one_statement(engine: Engine) -> None:
    result = execute(theme("A股"), CATALOG, engine, "t2", now=NOW)
    assert result.rows == () and result.evidence == ()
    assert result.baseline_total == 7
    assert len(result.sql_fingerprints) == 1  # main only: no baseline, no evidence statement


def test_execution_ids_are_uuid4_hex() -> None:
    import uuid

    from qdsl.executor.run import new_execution_id

    seen = {new_execution_id() for _ in range(2000)}
    assert len(seen) == 2000
    for text in seen:
        parsed = uuid.UUID(hex=text)
        assert parsed.hex == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
