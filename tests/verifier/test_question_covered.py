"""question_covered: the plan carries every condition of the question, whoever wrote it.

Unit tests judge hand-made plans against a reading; the mutation tests run a
scripted LLM planner through plan_and_answer on the demo database: a plan that
drops, inverts or widens one condition is caught every time, and nothing
beside the question is answered.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import Plan, QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.question import read_question
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, plan_from_reading
from qdsl.verifier import Answer, Outcome, Subject, VerifyContext
from qdsl.verifier.checks.question import question_covered

CATALOG = demo_catalog()


def judge(question: str, plan_text: str, rows: tuple[ResultRow, ...] = ()) -> list[str]:
    reading = read_question(question, CATALOG, now=DEMO_NOW)
    plan = normalize(load_plan(plan_text), CATALOG, PlanContext(tenant_id="t1")).plan
    return messages(reading, plan, rows)


def messages(reading: object, plan: Plan, rows: tuple[ResultRow, ...] = ()) -> list[str]:
    result = ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=plan.query_type,
        entity_type=plan.entity_type,
        template="t",
        plan_hash="h",
        rows=rows,
        count=len(rows),
    )
    answer = Answer(contract=plan.answer_contract or "clarify_or_fail", text="")  # type: ignore[arg-type]
    ctx = VerifyContext(tenant_id="t1", catalog=CATALOG, question=reading)  # type: ignore[arg-type]
    issues = list(question_covered(Subject(plan=plan, result=result, answer=answer, context=ctx)))
    assert all(i.level == "error" for i in issues)
    return [i.message for i in issues]


def test_a_residual_word_fails_naming_it_and_what_could_carry_it() -> None:
    (zh,) = judge("有多少个欧洲项目", "count project")
    assert zh.startswith("“欧洲”未被应用：project没有字段或取值与之匹配；可以承载它的字段：")
    assert "market_theme (A股, 港股, 美股)" in zh
    (en,) = judge("How many European projects are there?", "count project")
    assert en.startswith("“European” is not applied: no field or value of project matches it")


def test_a_residual_word_carried_as_text_passes() -> None:
    assert judge("有多少个欧洲项目", 'count project where title contains "欧洲"') == []


def test_the_outcome_asks_for_a_clarified_plan() -> None:
    reading = read_question("有多少个欧洲项目", CATALOG, now=DEMO_NOW)
    plan = normalize(load_plan("count project"), CATALOG, PlanContext(tenant_id="t1")).plan
    result = ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=QueryType.COUNT,
        entity_type="project",
        template="t",
        plan_hash="h",
        count=14,
    )
    answer = Answer(contract=plan.answer_contract, text="共有 14 个项目。")  # type: ignore[arg-type]
    ctx = VerifyContext(tenant_id="t1", catalog=CATALOG, question=reading)
    (issue,) = question_covered(Subject(plan=plan, result=result, answer=answer, context=ctx))
    assert issue.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN


# (question, the plan that carries it, plans that drop / invert / widen a condition)
MUTATIONS: list[tuple[str, str, list[str]]] = [
    (
        "有多少个进行中的项目",
        'count project where status = "active"',
        [
            "count project",
            'count project where status != "active"',
            'count project where status in ("active", "paused")',
        ],
    ),
    (
        "预算超过 20 万的项目有哪些",
        "list project where budget > 200000",
        [
            "list project",
            "list project where budget <= 200000",
            "list project where budget > 100000",
            "list project where budget >= 200000",
        ],
    ),
    (
        "How many projects were created in 2026?",
        'count project where created_at >= "2026-01-01T00:00:00+00:00" '
        'and created_at < "2027-01-01T00:00:00+00:00"',
        [
            "count project",
            'count project where created_at >= "2026-01-01T00:00:00+00:00"',
            'count project where created_at < "2026-01-01T00:00:00+00:00"',
            'count project where created_at >= "2025-01-01T00:00:00+00:00" '
            'and created_at < "2027-01-01T00:00:00+00:00"',
        ],
    ),
    (
        "有多少个没有预算的项目",
        "count project where budget is null",
        ["count project", "count project where budget is not null"],
    ),
    (
        "有几个任务还没完成",
        'count task where status != "done"',
        [
            "count task",
            'count task where status = "done"',
            'count task where status not in ("done", "blocked")',
        ],
    ),
    (
        "有没有港股相关的项目？",
        'existence project where market_theme ~= "港股"',
        [
            "existence project",
            'existence project where market_theme ~= "A股"',
            'count project where market_theme ~= "港股"',
        ],
    ),
    (
        "Which project has the largest budget?",
        "list project order by budget desc limit 1",
        [
            "list project limit 1",
            "list project order by budget asc limit 1",
            "list project order by budget desc",
        ],
    ),
    (
        "Which tasks are assigned to project 64?",
        'list task where project_id = "64"',
        ["list task", 'list task where project_id = "65"', 'list project where id = "64"'],
    ),
]


@pytest.mark.parametrize(("question", "good", "bad"), MUTATIONS)
def test_the_check_accepts_the_carrying_plan_and_no_mutant(
    question: str, good: str, bad: list[str]
) -> None:
    assert judge(question, good) == []
    for plan_text in bad:
        if plan_text.startswith("count ") and "existence" in good:
            continue  # a count for an existence question is contract_matches_query_type's
        assert judge(question, plan_text), plan_text


def test_the_rule_planners_own_plan_passes() -> None:
    for question, _, _ in MUTATIONS:
        reading = read_question(question, CATALOG, now=DEMO_NOW)
        plan = plan_from_reading(reading, CATALOG)
        bound = normalize(plan, CATALOG, PlanContext(tenant_id="t1")).plan
        assert messages(reading, bound) == [], question


def test_result_rows_that_break_a_condition_fail() -> None:
    row = ResultRow(entity_type="project", entity_id="61", tenant_id="t1", values={"budget": 5})
    (msg,) = judge("预算超过 20 万的项目有哪些", "list project where budget > 200000", (row,))
    assert "61" in msg


def test_explain_passages_must_mention_the_terms() -> None:
    row = ResultRow(
        entity_type="doc",
        entity_id="1",
        tenant_id="t1",
        label="qdsl architecture",
        values={"body": "a question becomes a plan"},
    )
    plan = (
        'explain doc where topic contains "quantum computing" retrieval facts_first, fallback_text'
    )
    (msg,) = judge("What is quantum computing?", plan, (row,))
    assert msg == "no cited passage mentions “quantum computing”"


class Script:
    """A fake completion that always writes the same plan."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply


def _cases() -> Iterable[tuple[str, str]]:
    for question, _, bad in MUTATIONS:
        for plan_text in bad:
            yield question, plan_text


@pytest.mark.parametrize(("question", "plan_text"), list(_cases()))
def test_an_llm_plan_beside_the_question_never_leaves(
    sqlite_engine: Engine, question: str, plan_text: str
) -> None:
    script = Script(plan_text)
    options = AnswerOptions(now=DEMO_NOW, planner=LLMPlanner(script))
    res = plan_and_answer(question, "t1", engine=sqlite_engine, options=options)
    assert res.status in ("clarify", "refused"), (res.status, res.text)
    assert res.data.get("items") is None and res.data.get("count") is None
    assert res.verdict is not None and res.verdict.failed
    if len(script.prompts) > 1:
        # the repair prompt carries the feedback that names what was not applied
        assert "A previous plan for this question was refused" in script.prompts[-1]


@pytest.mark.parametrize(("question", "good", "bad"), MUTATIONS)
def test_an_llm_plan_that_carries_the_question_is_answered(
    sqlite_engine: Engine, question: str, good: str, bad: list[str]
) -> None:
    options = AnswerOptions(now=DEMO_NOW, planner=LLMPlanner(Script(good)))
    res = plan_and_answer(question, "t1", engine=sqlite_engine, options=options)
    assert res.status == "answered", (res.status, res.text, res.verdict)


def test_an_llm_out_of_retries_clarifies_with_the_sentence(sqlite_engine: Engine) -> None:
    options = AnswerOptions(now=DEMO_NOW, planner=LLMPlanner(Script("count project")))
    res = plan_and_answer("有多少个欧洲项目", "t1", engine=sqlite_engine, options=options)
    assert res.status == "clarify"
    assert res.text.startswith("“欧洲”未被应用")
