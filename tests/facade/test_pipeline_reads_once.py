"""One reading per question, no plan text round trip, one compile per plan.

The pipeline reads the question once and hands the same reading to the rule
planner and to the verifier (question_covered, the intended query type); the
rule planner's plan object goes to the normalizer without being printed and
parsed again; asked again, the plan is served by the compile cache.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

import qdsl.dsl.plan.parser
import qdsl.dsl.plan.plan_cache
import qdsl.planner.rule
import qdsl.stages
from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.plan.plan_cache import PLANS
from qdsl.dsl.question import Reading, read_question
from qdsl.facts.demo import DEMO_NOW
from qdsl.verifier import VerifyContext


def test_a_question_is_read_once_and_never_printed_and_parsed(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    readings: list[Reading] = []
    contexts: list[VerifyContext] = []

    def reading(*args: Any, **kwargs: Any) -> Reading:
        readings.append(read_question(*args, **kwargs))
        return readings[-1]

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("plan text printed or parsed on the rule planner's path")

    original_context = qdsl.stages.Run.verify_context

    def verify_context(self: qdsl.stages.Run) -> VerifyContext:
        contexts.append(original_context(self))
        return contexts[-1]

    monkeypatch.setattr(qdsl.stages, "read_question", reading)
    monkeypatch.setattr(qdsl.planner.rule, "read_question", reading)
    monkeypatch.setattr(qdsl.planner.rule, "to_text", never)
    monkeypatch.setattr(qdsl.dsl.plan.parser, "parse_text", never)
    monkeypatch.setattr(qdsl.stages.Run, "verify_context", verify_context)
    res = plan_and_answer(
        "有多少个进行中的项目", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    assert res.status == "answered"
    assert len(readings) == 1
    assert [c.question for c in contexts] == [readings[0]]


def test_asked_again_the_plan_comes_from_the_compile_cache(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = AnswerOptions(now=DEMO_NOW)
    PLANS.clear()  # other tests in this process may have compiled these plans
    first = plan_and_answer("列出所有暂停的项目", "t2", engine=sqlite_engine, options=options)
    calls: list[object] = []
    original = qdsl.dsl.plan.plan_cache.normalize

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(qdsl.dsl.plan.plan_cache, "normalize", counting)
    hits = PLANS.hits
    again = plan_and_answer("列出所有暂停的项目", "t2", engine=sqlite_engine, options=options)
    assert calls == [] and PLANS.hits == hits + 1
    assert again.plan == first.plan and again.data == first.data
    # another tenant: compiled afresh, never served the first tenant's plan
    other = plan_and_answer("列出所有暂停的项目", "t1", engine=sqlite_engine, options=options)
    assert len(calls) == 1 and other.status == "answered"
