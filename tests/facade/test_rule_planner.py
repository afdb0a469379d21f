"""The rule planner's readings: cues, synonyms, aliases, negation, ids, and `unknown`."""

from __future__ import annotations

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.planner import RulePlanner, classify, intended_query_type

CATALOG = demo_catalog()


def body(question: str) -> str:
    """The plan text without its `plan v1` line, one space between clauses."""
    text = RulePlanner().plan(question, catalog=CATALOG).text
    return " ".join(line.strip() for line in text.splitlines()[1:])


CASES = [
    ("帮我看看系统里面有没有 A 股项目", 'existence project where market_theme ~= "A股"'),
    ("有没有港股相关的项目？", 'existence project where market_theme ~= "港股"'),
    ("Are there any A-share projects?", 'existence project where market_theme ~= "A股"'),
    (
        "Is there a project about Hong Kong equities?",
        'existence project where market_theme ~= "港股"',
    ),
    ("系统中是否存在港股项目", 'existence project where market_theme ~= "港股"'),
    ("A股项目有吗", 'existence project where market_theme ~= "A股"'),
    ("现在有多少个项目", "count project"),
    ("有多少个进行中的项目", 'count project where status = "active"'),
    ("How many paused projects do we have?", 'count project where status = "paused"'),
    ("有几个任务还没完成", 'count task where status != "done"'),
    ("How many tasks are not done?", 'count task where status != "done"'),
    ("有多少个港股项目", 'count project where market_theme ~= "港股"'),
    ("How many users are admins?", 'count user where role = "admin"'),
    ("系统里有哪些项目", "list project"),
    ("列出所有暂停的项目", 'list project where status = "paused"'),
    ("Which tasks are assigned to project 64?", 'list task where project_id = "64"'),
    ("项目 64 有哪些任务", 'list task where project_id = "64"'),
    ("项目 64 现在什么状态", 'status project where id = "64"'),
    ("What is the status of run 12?", 'status run where id = "12"'),
    (
        "当前系统架构是什么",
        'explain doc where topic ~= "architecture" retrieval facts_first, fallback_text',
    ),
    (
        "What does the ingress gate do?",
        'explain doc where topic ~= "ingress_gate" retrieval facts_first, fallback_text',
    ),
    ("为什么刚才答错了", 'diagnose run where status = "failed" order by started_at desc limit 1'),
    ("Why did run 12 fail?", 'diagnose run where id = "12"'),
    ("项目 64 和 65 有什么区别", 'compare project where id in ("64", "65")'),
    ("Compare project 64 with project 65", 'compare project where id in ("64", "65")'),
]


@pytest.mark.parametrize(("question", "plan"), CASES)
def test_readings(question: str, plan: str) -> None:
    assert body(question) == plan
    text = RulePlanner().plan(question, catalog=CATALOG).text
    normalize(load_plan(text), CATALOG, PlanContext(tenant_id="t1"))  # always a valid plan


UNSURE = [
    "嗯",
    "帮我看看",
    "Hmm",
    "项目",
    "A股",
    "64",
    "Tell me about the weather",
    "项目现在什么状态",  # status without an id
    "项目 64 有什么区别",  # a comparison of one
    "有没有不是港股的项目",  # not_equals is not allowed on market_theme
    "有多少个A股项目和港股项目",  # `in` is not allowed on market_theme
]


@pytest.mark.parametrize("question", UNSURE)
def test_unknown_when_unsure(question: str) -> None:
    draft = RulePlanner().plan(question, catalog=CATALOG)
    assert draft.text.splitlines()[1].startswith("unknown ")
    assert draft.notes
    assert intended_query_type(question, CATALOG) is None


def test_yes_no_words_are_not_negations() -> None:
    assert body("有没有没完成的任务") == 'existence task where status != "done"'
    assert body("是不是有暂停的项目") == 'existence project where status = "paused"'


@pytest.mark.parametrize(
    ("question", "qt"),
    [
        ("有多少个项目", QueryType.COUNT),
        ("有没有项目", QueryType.EXISTENCE),
        ("What is the status of run 12?", QueryType.STATUS),
        ("项目 64 和 65 有什么区别", QueryType.COMPARE),
        ("为什么", QueryType.DIAGNOSE),
        ("what is qdsl", QueryType.EXPLAIN),
        ("帮我看看", None),
    ],
)
def test_cue_order(question: str, qt: QueryType | None) -> None:
    assert classify(question) is qt


def test_feedback_is_acknowledged_not_obeyed() -> None:
    draft = RulePlanner().plan("有没有 A 股项目", catalog=CATALOG, feedback="use count")
    assert draft.text.splitlines()[1] == "existence project"
    assert any("deterministic" in n for n in draft.notes)
