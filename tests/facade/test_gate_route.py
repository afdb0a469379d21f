"""The ingress gate and the route check stop messages before any planner sees them."""

from __future__ import annotations

import pytest
from planner_doubles import SpyPlanner
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.errors import PolicyError
from qdsl.facts.demo import DEMO_NOW
from qdsl.gate import GateKind, GateLexicon, gate

GATED = [
    ("A", GateKind.PROTOCOL_REPLY),
    ("B", GateKind.PROTOCOL_REPLY),
    ("C", GateKind.PROTOCOL_REPLY),
    ("选 B", GateKind.PROTOCOL_REPLY),
    ("确认", GateKind.PROTOCOL_REPLY),
    ("好的", GateKind.PROTOCOL_REPLY),
    ("继续", GateKind.PROTOCOL_REPLY),
    ("ok", GateKind.PROTOCOL_REPLY),
    ("OK.", GateKind.PROTOCOL_REPLY),
    ("yes", GateKind.PROTOCOL_REPLY),
    ("好的，谢谢", GateKind.PROTOCOL_REPLY),
    ("退出需求模式", GateKind.MODE_CONTROL),
    ("exit plan mode", GateKind.MODE_CONTROL),
    ("接入外部来源继续核实", GateKind.ACTION_REQUEST),
    ("再出一版草稿", GateKind.DRAFT_ACTION),
]


@pytest.mark.parametrize(("message", "kind"), GATED)
def test_gate_phrases_never_reach_the_planner(
    sqlite_engine: Engine, message: str, kind: GateKind
) -> None:
    spy = SpyPlanner()
    res = plan_and_answer(
        message, "t1", engine=sqlite_engine, options=AnswerOptions(planner=spy, now=DEMO_NOW)
    )
    assert res.status == "gated"
    assert res.gate_kind == kind.value
    assert spy.questions == []
    assert res.plan is None and res.verdict is None and res.data == {}


@pytest.mark.parametrize(
    "question",
    [
        "有没有 A 股项目",
        "A股",
        "B 项目现在什么状态",
        "Are there any A-share projects?",
        "嗯",
        "ok 有多少个项目",
    ],
)
def test_questions_are_not_gated(question: str) -> None:
    assert not gate(question).gated


def test_lexicon_is_configurable(sqlite_engine: Engine) -> None:
    lexicon = GateLexicon().extended({GateKind.PROTOCOL_REPLY: ("收到",)})
    assert not gate("收到").gated
    assert gate("收到", lexicon).kind is GateKind.PROTOCOL_REPLY
    spy = SpyPlanner()
    res = plan_and_answer(
        "收到",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=spy, lexicon=lexicon, now=DEMO_NOW),
    )
    assert res.status == "gated" and spy.questions == []
    only_drafts = GateLexicon(phrases={GateKind.DRAFT_ACTION: ("再来",)}, choice=None)
    assert not gate("确认", only_drafts).gated
    assert not gate("B", only_drafts).gated


@pytest.mark.parametrize("route", ["external", "web", "hybrid", ""])
def test_non_internal_route_is_refused_before_planning(sqlite_engine: Engine, route: str) -> None:
    spy = SpyPlanner()
    with pytest.raises(PolicyError) as info:
        plan_and_answer(
            "有没有 A 股项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(planner=spy, route_mode=route),
        )
    assert info.value.code == "policy/route_not_internal"
    assert spy.questions == []


def test_questions_do_reach_the_planner(sqlite_engine: Engine) -> None:
    spy = SpyPlanner()
    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=spy, now=DEMO_NOW),
    )
    assert res.status == "answered"
    assert spy.questions == ["有没有 A 股项目"]
