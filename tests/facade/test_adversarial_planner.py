"""A planner that answers existence questions with count plans never gets an answer out."""

from __future__ import annotations

import pytest
from planner_doubles import CountingAdversary
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.audit import MemorySink
from qdsl.facts.demo import DEMO_NOW

EXISTENCE_QUESTIONS = [
    "帮我看看系统里面有没有 A 股项目",
    "有没有港股相关的项目？",
    "Are there any A-share projects?",
    "Is there a project about Hong Kong equities?",
    "有没有项目",
    "Are there any paused projects?",
]


@pytest.mark.parametrize("keep_filters", [True, False])
@pytest.mark.parametrize("question", EXISTENCE_QUESTIONS)
@pytest.mark.parametrize("tenant", ["t1", "t2"])
def test_count_plans_for_existence_questions_are_refused(
    sqlite_engine: Engine, question: str, keep_filters: bool, tenant: str
) -> None:
    adversary = CountingAdversary(keep_filters=keep_filters)
    sink = MemorySink()
    res = plan_and_answer(
        question,
        tenant,
        engine=sqlite_engine,
        options=AnswerOptions(planner=adversary, now=DEMO_NOW, audit_sink=sink),
    )
    assert res.status == "refused"
    assert res.data == {}
    assert res.evidence == ()
    assert res.verdict is not None and "contract_matches_query_type" in res.verdict.failed
    assert res.verdict.outcome.value == "retry_with_clarified_plan"
    # It was asked once more with the verdict as feedback, and bounded there.
    assert adversary.calls == 2
    assert adversary.feedback[0] is None
    assert adversary.feedback[1] is not None and "existence" in adversary.feedback[1]
    stages = [e["stage"] for e in sink.events]
    assert stages.count("plan") == 2 and "refused" in stages
    assert sink.events[-1]["status"] == "refused"


def test_the_honest_planner_answers_the_same_questions(sqlite_engine: Engine) -> None:
    for question in EXISTENCE_QUESTIONS:
        res = plan_and_answer(
            question, "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
        )
        assert res.status == "answered", question
        assert set(res.data) == {"exists", "matches"}
