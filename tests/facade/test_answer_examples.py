"""Every plan-language / questions.md example (zh, and an en twin) end to end on the demo data.

Each answer is checked against an independent oracle: plain SQL over the demo
tables, not the executor's templates. Runs on SQLite and (marked pg) PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, text

from qdsl.api import AnswerOptions, AnswerResult, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.demo import DEMO_NOW

CATALOG = demo_catalog()


def ask(engine: Engine, question: str, tenant: str = "t1") -> AnswerResult:
    return plan_and_answer(question, tenant, engine=engine, options=AnswerOptions(now=DEMO_NOW))


def scalar(engine: Engine, sql: str, **params: Any) -> Any:
    with engine.connect() as conn:
        return conn.execute(text(sql), params).scalar_one()


def column(engine: Engine, sql: str, **params: Any) -> set[str]:
    with engine.connect() as conn:
        return {str(v) for v in conn.execute(text(sql), params).scalars()}


def theme_ids(engine: Engine, tenant: str, canonical: str) -> set[str]:
    aliases = CATALOG.entities["project"].fields["market_theme"].aliases[canonical]
    norms = sorted({normalize_text(a) for a in (canonical, *aliases)})
    marks = ", ".join(f":n{i}" for i in range(len(norms)))
    sql = (
        "SELECT DISTINCT entity_id FROM semantic_facts WHERE tenant_id = :t "
        f"AND entity_type = 'project' AND predicate = 'market_theme' AND value_norm IN ({marks})"
    )
    return column(engine, sql, t=tenant, **{f"n{i}": n for i, n in enumerate(norms)})


def assert_answered(res: AnswerResult, contract: str, language: str) -> None:
    assert res.status == "answered", (res.status, res.text, res.verdict)
    assert res.answer_contract is not None and res.answer_contract.value == contract
    assert res.verdict is not None and res.verdict.ok
    assert res.language == language
    assert res.plan is not None and res.plan.scope.tenant_id == res.plan.scope.tenant_id


EXISTENCE = [
    ("帮我看看系统里面有没有 A 股项目", "A股", "zh"),
    ("Are there any A-share projects?", "A股", "en"),
    ("有没有港股相关的项目？", "港股", "zh"),
    ("Is there a project about Hong Kong equities?", "港股", "en"),
]


@pytest.mark.parametrize("tenant", ["t1", "t2", "t3"])
@pytest.mark.parametrize(("question", "theme", "lang"), EXISTENCE)
def test_existence(engine: Engine, question: str, theme: str, lang: str, tenant: str) -> None:
    res = ask(engine, question, tenant)
    assert_answered(res, "yes_no_with_evidence", lang)
    expected = theme_ids(engine, tenant, theme)
    assert res.data["exists"] is bool(expected)
    matched = {m["id"] for m in res.data["matches"]}
    assert matched <= expected
    assert matched == expected or len(matched) == res.plan.limit  # type: ignore[union-attr]
    if expected:
        n = len(matched)
        stated = f"找到 {n} 个" if lang == "zh" else f"Found {n} "
        at_least = f"找到 至少 {n} 个" if lang == "zh" else f"Found at least {n} "
        assert stated in res.text if matched == expected else at_least in res.text
    if expected:
        assert res.evidence and all(e.tenant_id == tenant for e in res.evidence)
        facts = [e for e in res.evidence if e.kind == "fact"]
        assert facts and all(e.predicate == "market_theme" for e in facts)
    if lang == "en":
        assert res.text.startswith("Yes" if expected else "No")
    else:
        assert res.text.startswith("有" if expected else "没有")


COUNTS = [
    ("现在有多少个项目", "zh", "SELECT count(*) FROM projects WHERE tenant_id = :t"),
    (
        "How many projects are there now?",
        "en",
        "SELECT count(*) FROM projects WHERE tenant_id = :t",
    ),
    (
        "有多少个进行中的项目",
        "zh",
        "SELECT count(*) FROM projects WHERE tenant_id = :t AND status = 'active'",
    ),
    (
        "How many active projects are there?",
        "en",
        "SELECT count(*) FROM projects WHERE tenant_id = :t AND status = 'active'",
    ),
    (
        "How many paused projects do we have?",
        "en",
        "SELECT count(*) FROM projects WHERE tenant_id = :t AND status = 'paused'",
    ),
    (
        "有多少个暂停的项目",
        "zh",
        "SELECT count(*) FROM projects WHERE tenant_id = :t AND status = 'paused'",
    ),
    (
        "有几个任务还没完成",
        "zh",
        "SELECT count(*) FROM tasks WHERE tenant_id = :t AND status <> 'done'",
    ),
    (
        "How many tasks are not done yet?",
        "en",
        "SELECT count(*) FROM tasks WHERE tenant_id = :t AND status <> 'done'",
    ),
]


@pytest.mark.parametrize(("question", "lang", "oracle"), COUNTS)
def test_count(engine: Engine, question: str, lang: str, oracle: str) -> None:
    res = ask(engine, question)
    assert_answered(res, "count_scalar", lang)
    assert res.data == {"count": scalar(engine, oracle, t="t1")}
    assert str(res.data["count"]) in res.text


def test_filtered_count_counts_only_matches(engine: Engine) -> None:
    res = ask(engine, "有多少个港股项目")
    assert_answered(res, "count_scalar", "zh")
    assert res.data["count"] == len(theme_ids(engine, "t1", "港股"))
    total = scalar(engine, "SELECT count(*) FROM projects WHERE tenant_id = 't1'")
    assert res.data["count"] != total


LISTS = [
    ("系统里有哪些项目", "zh", "SELECT id FROM projects WHERE tenant_id = :t"),
    ("Which projects are in the system?", "en", "SELECT id FROM projects WHERE tenant_id = :t"),
    (
        "列出所有暂停的项目",
        "zh",
        "SELECT id FROM projects WHERE tenant_id = :t AND status = 'paused'",
    ),
    (
        "List all paused projects",
        "en",
        "SELECT id FROM projects WHERE tenant_id = :t AND status = 'paused'",
    ),
    (
        "Which tasks are assigned to project 64?",
        "en",
        "SELECT id FROM tasks WHERE tenant_id = :t AND project_id = '64'",
    ),
    ("项目 64 有哪些任务", "zh", "SELECT id FROM tasks WHERE tenant_id = :t AND project_id = '64'"),
]


@pytest.mark.parametrize(("question", "lang", "oracle"), LISTS)
def test_list(engine: Engine, question: str, lang: str, oracle: str) -> None:
    res = ask(engine, question)
    assert_answered(res, "entity_list", lang)
    expected = column(engine, oracle, t="t1")
    assert set(res.data) == {"items", "total", "truncated"}
    assert res.data["total"] == len(expected)
    assert {i["id"] for i in res.data["items"]} == expected


STATUS = [
    ("项目 64 现在什么状态", "zh", "project", "64", "projects"),
    ("What is the status of project 64?", "en", "project", "64", "projects"),
    ("What is the status of run 12?", "en", "run", "12", "runs"),
    ("运行 12 现在什么状态", "zh", "run", "12", "runs"),
]


@pytest.mark.parametrize(("question", "lang", "entity", "ident", "table"), STATUS)
@pytest.mark.parametrize("tenant", ["t1", "t2"])
def test_status(  # noqa: PLR0917 - parametrized
    engine: Engine, question: str, lang: str, entity: str, ident: str, table: str, tenant: str
) -> None:
    res = ask(engine, question, tenant)
    assert_answered(res, "entity_snapshot", lang)
    snap = res.data["entity"]
    assert snap["id"] == ident
    status = scalar(
        engine, f"SELECT status FROM {table} WHERE tenant_id = :t AND id = :i", t=tenant, i=ident
    )
    assert snap["status"] == status
    assert ident in res.text and status in res.text
    assert res.evidence and {e.tenant_id for e in res.evidence} == {tenant}


EXPLAIN = [
    ("当前系统架构是什么", "zh", "architecture"),
    ("What is the current system architecture?", "en", "architecture"),
    ("What does the ingress gate do?", "en", "ingress_gate"),
    ("入口闸门是做什么的", "zh", "ingress_gate"),
]


@pytest.mark.parametrize(("question", "lang", "topic"), EXPLAIN)
def test_explain(engine: Engine, question: str, lang: str, topic: str) -> None:
    res = ask(engine, question)
    assert_answered(res, "explanation_with_citations", lang)
    expected = column(
        engine,
        "SELECT entity_id FROM semantic_facts WHERE tenant_id = 't1' AND entity_type = 'doc' "
        "AND predicate = 'topic' AND value_norm = :v",
        v=topic,
    )
    passages = res.data["passages"]
    assert passages and {p["id"] for p in passages} <= expected
    cited = set(res.data["citations"])
    assert cited and cited == {e.id for e in res.evidence}
    assert all(f"[{c}]" in res.text for c in cited)


def test_explain_without_docs_is_insufficient_evidence(engine: Engine) -> None:
    res = ask(engine, "What does the ingress gate do?", "t2")
    assert res.status == "insufficient_evidence"
    assert res.data == {}


DIAGNOSE = [
    ("为什么刚才答错了", "zh", None),
    ("Why was the last answer wrong?", "en", None),
    ("Why did run 12 fail?", "en", "12"),
    ("运行 12 为什么失败了", "zh", "12"),
]


@pytest.mark.parametrize(("question", "lang", "ident"), DIAGNOSE)
def test_diagnose(engine: Engine, question: str, lang: str, ident: str | None) -> None:
    res = ask(engine, question)
    assert_answered(res, "diagnosis_with_evidence", lang)
    if ident is None:
        ident = str(
            scalar(
                engine,
                "SELECT id FROM runs WHERE tenant_id = 't1' AND status = 'failed' "
                "ORDER BY started_at DESC LIMIT 1",
            )
        )
    (finding,) = res.data["findings"]
    assert finding["id"] == ident
    assert finding["evidence"] and finding["facts"].get("error")
    errors = column(
        engine,
        "SELECT value_text FROM semantic_facts WHERE tenant_id = 't1' AND entity_type = 'run' "
        "AND entity_id = :i AND predicate = 'error'",
        i=ident,
    )
    # every error the run's facts state, not the first alone
    assert sorted(finding["facts"]["error"]) == sorted(set(errors))


COMPARE = [
    ("项目 64 和 65 有什么区别", "zh"),
    ("Compare project 64 with project 65", "en"),
    ("What is the difference between project 64 and 65?", "en"),
]


@pytest.mark.parametrize(("question", "lang"), COMPARE)
@pytest.mark.parametrize("tenant", ["t1", "t2", "t3"])
def test_compare(engine: Engine, question: str, lang: str, tenant: str) -> None:
    res = ask(engine, question, tenant)
    assert_answered(res, "comparison_with_basis", lang)
    assert [s["id"] for s in res.data["subjects"]] == ["64", "65"]
    titles = {
        i: scalar(
            engine, "SELECT title FROM projects WHERE tenant_id = :t AND id = :i", t=tenant, i=i
        )
        for i in ("64", "65")
    }
    diffs = {d["field"]: d["values"] for d in res.data["differences"]}
    assert diffs["title"] == titles


UNKNOWN = [("嗯", "zh"), ("Hmm", "en"), ("帮我看看", "zh"), ("Help me take a look", "en")]


@pytest.mark.parametrize(("question", "lang"), UNKNOWN)
def test_unclear_questions_clarify(engine: Engine, question: str, lang: str) -> None:
    res = ask(engine, question)
    assert res.status == "clarify"
    assert res.answer_contract is not None and res.answer_contract.value == "clarify_or_fail"
    assert set(res.data) == {"clarification"} and res.data["clarification"]
    assert res.language == lang
    assert res.execution_id is None
