"""The project scope is executed and verified, bound through the catalog's `[scope]`.

Issue 20: `count task project "64"` gave the same count as `count task`: the
scope was parsed, printed and limited, and never executed. The demo catalog
declares `[scope] entity = "project"`: a scoped plan over projects keeps the
one project, over tasks, runs and signals the rows whose `project_id` (their
one field referencing project) is the scope's id, on every statement a plan
runs (main, text fallback), tenant-bound; an entity no field ties to a project
is `not_covered`; the printed plan shows the scope, and `within_scope` refuses
a row outside it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from exec_support import CATALOG
from sqlalchemy import Engine

from qdsl import AnswerOptions, plan_and_answer
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.kinds import VerifierCheck
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.dsl.plan.printer import to_text
from qdsl.executor.compile import compile_plan
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute
from qdsl.facts.demo.constants import T1_HK_TEXT_ONLY, T1_TASKS_OF_64
from qdsl.render import render
from qdsl.verifier import VerifyContext, verify


def _run(source: str, engine: Engine, tenant: str = "t1") -> ExecutionResult:
    bound = compile_source(source, CATALOG, PlanContext(tenant_id=tenant)).bound
    assert bound is not None
    return execute(bound, CATALOG, engine, tenant)


def _count(engine: Engine, sql: str, **params: Any) -> int:
    # the admin connection of the test database: hand-written SQL, no qdsl
    with engine.connect() as conn:
        return int(conn.execute(sa.text(sql), params).scalar_one())


def test_a_project_scope_narrows_a_count(engine: Engine) -> None:
    every = _run("count task", engine).count
    scoped = _run('count task project "64"', engine).count
    assert scoped == len(T1_TASKS_OF_64)
    assert scoped == _count(
        engine, "SELECT count(*) FROM tasks WHERE tenant_id = 't1' AND project_id = '64'"
    )
    assert scoped != every


def test_the_json_form_scopes_alike(engine: Engine) -> None:
    plan = json.dumps({"query_type": "count", "entity_type": "task", "scope": {"project_id": "64"}})
    assert _run(plan, engine).count == len(T1_TASKS_OF_64)


def test_a_scoped_list_shows_each_rows_scope(engine: Engine) -> None:
    result = _run('list task project "64" select id, title', engine)
    assert {r.entity_id for r in result.rows} == T1_TASKS_OF_64
    assert {r.values["project_id"] for r in result.rows} == {"64"}


def test_the_scope_is_tenant_bound(engine: Engine) -> None:
    for tenant in ("t1", "t2", "t3"):
        want = _count(
            engine,
            "SELECT count(*) FROM tasks WHERE tenant_id = :t AND project_id = '64'",
            t=tenant,
        )
        assert _run('count task project "64"', engine, tenant).count == want


def test_the_scope_entity_is_scoped_by_its_id(engine: Engine) -> None:
    result = _run('list project project "64"', engine)
    assert [r.entity_id for r in result.rows] == ["64"]


def test_the_text_fallback_runs_within_the_scope(engine: Engine) -> None:
    (hk,) = T1_HK_TEXT_ONLY  # 港股 in its summary, no fact says so
    plan = 'existence project where market_theme ~= "港股" retrieval fallback_text'
    assert hk not in {r.entity_id for r in _run(plan, engine).rows}  # facts found others
    inside = _run(f'{plan} project "{hk}"', engine)  # no fact in the scope: text
    assert [r.entity_id for r in inside.rows] == [hk] and inside.used_fallback
    assert hk in {r.entity_id for r in _run(f"{plan}, no_facts_first", engine).rows}
    text_first = _run(f'{plan}, no_facts_first project "64"', engine)
    assert text_first.used_fallback and {r.entity_id for r in text_first.rows} <= {"64"}


def test_an_entity_no_field_ties_to_the_scope_is_not_covered() -> None:
    with pytest.raises(NotCoveredError) as info:
        compile_source('count doc project "64"', CATALOG, PlanContext(tenant_id="t1"))
    assert info.value.code == "not_covered/scope_not_covered"
    assert info.value.details["entity_type"] == "doc"
    assert info.value.details["path"] == "scope.project_id"
    assert "doc" in info.value.message


def test_the_printed_plan_and_its_sql_show_the_scope() -> None:
    normalized = compile_source('count task project "64"', CATALOG, PlanContext(tenant_id="t1"))
    text = to_text(normalized.plan)
    assert "project 64" in text and VerifierCheck.WITHIN_SCOPE.value in text
    assert load_plan(text) == normalized.plan
    compiled = compile_plan(load_plan('count task project "64"'), CATALOG, "sqlite", tenant_id="t1")
    main = compiled.statements[0]
    assert main.params["scope_id"] == "64" and "tasks.project_id = ?" in main.sql


def _verdict(source: str, engine: Engine, rows: Any = None) -> tuple[str, ...]:
    bound = compile_source(source, CATALOG, PlanContext(tenant_id="t1")).bound
    assert bound is not None
    result = execute(bound, CATALOG, engine, "t1")
    if rows is not None:
        result = result.model_copy(update={"rows": rows(result.rows)})
    answer = render(bound.plan, result, language="en", catalog=CATALOG)
    context = VerifyContext(tenant_id="t1", catalog=CATALOG)
    return verify(bound.plan, result, answer, context=context).failed


def test_within_scope_refuses_a_row_outside_the_scope(engine: Engine) -> None:
    source = 'list task project "64"'
    assert _verdict(source, engine) == ()

    def moved(rows: Any) -> Any:
        first = rows[0].model_copy(update={"values": {**rows[0].values, "project_id": "65"}})
        return (first, *rows[1:])

    def unshown(rows: Any) -> Any:
        values = {k: v for k, v in rows[0].values.items() if k != "project_id"}
        return (rows[0].model_copy(update={"values": values}), *rows[1:])

    assert "within_scope" in _verdict(source, engine, moved)
    assert "within_scope" in _verdict(source, engine, unshown)


def test_the_contexts_project_scopes_a_question(engine: Engine) -> None:
    options = AnswerOptions(context=PlanContext(project_id="64"))
    res = plan_and_answer("How many tasks are there?", "t1", engine=engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert res.data["count"] == len(T1_TASKS_OF_64)
    assert "within project 64" in res.text
    assert "within_scope" in res.verdict.passed
    zh = plan_and_answer("有多少个任务", "t1", engine=engine, options=options)
    assert zh.data["count"] == len(T1_TASKS_OF_64) and "项目 64 内" in zh.text


def test_the_contexts_project_leaves_what_it_cannot_scope(engine: Engine) -> None:
    """Documents belong to no project, and a question naming its own project
    means that one: both run unscoped, and the warnings say why."""
    options = AnswerOptions(context=PlanContext(project_id="64"))
    docs = plan_and_answer("有多少个文档", "t1", engine=engine, options=options)
    assert docs.status == "answered" and docs.plan is not None
    assert docs.plan.scope.project_id is None
    assert any("doc has no field referencing project" in w for w in docs.warnings)
    other = plan_and_answer("项目 65 有哪些任务", "t1", engine=engine, options=options)
    assert other.status == "answered" and other.plan is not None
    assert other.plan.scope.project_id is None
    assert {i["id"] for i in other.data["items"]} == {"7"}
