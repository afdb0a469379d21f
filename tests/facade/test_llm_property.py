"""Whatever the LLM writes, the result is verified or an explicit status; and
each attempt's cost reaches the audit."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import ErrorType, QdslError
from qdsl.dsl.plan.load import load_plan
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, RulePlanner
from qdsl.planner.llm import Reply

CATALOG = demo_catalog()
QUESTIONS = [
    "现在有多少个进行中的项目",
    "有没有 A 股项目",
    "Which tasks are assigned to project 64?",
]
GOOD = [RulePlanner().plan(q, catalog=CATALOG).text for q in QUESTIONS]


def _variants() -> list[str]:
    out: list[str] = []
    for text in GOOD:
        plan = load_plan(text).to_json_dict()
        out += [text, json.dumps(plan), f"```\n{text}\n```"]
        out.append(json.dumps({**plan, "filters": []}))
        out.append(json.dumps({**plan, "entity_type": "nothing_here"}))
        out.append(json.dumps({**plan, "scope": {"tenant_id": "t2"}}))
        out.append(text.replace("where", 'where tenant_id = "t2" and', 1))
    return out


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
REPLY = st.one_of(
    st.sampled_from(_variants()),
    st.text(max_size=80),
    _json.map(json.dumps),
    st.sampled_from(["SELECT * FROM projects", "", "count", "137", "I think yes."]),
)


class Script:
    def __init__(self, replies: list[str]) -> None:
        self.replies, self.calls = replies, 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return self.replies[min(self.calls, len(self.replies)) - 1]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(question=st.sampled_from(QUESTIONS), replies=st.lists(REPLY, min_size=1, max_size=4))
def test_any_reply_is_verified_or_an_explicit_status(
    sqlite_engine: Engine, question: str, replies: list[str]
) -> None:
    options = AnswerOptions(planner=LLMPlanner(Script(replies)), now=DEMO_NOW)
    try:
        res = plan_and_answer(question, "t1", engine=sqlite_engine, options=options)
    except QdslError as exc:
        # A typed user error with its exit code (never an internal one, exit 1).
        assert exc.type is not ErrorType.INTERNAL and exc.exit_code != 1
        return
    if res.status == "answered":
        assert res.verdict is not None and res.verdict.ok
    else:
        assert res.status in ("clarify", "refused", "insufficient_evidence", "not_covered")
        assert res.verdict is None or not res.verdict.ok


def test_each_attempt_reaches_the_audit(sqlite_engine: Engine) -> None:
    lines: list[str] = []

    class Sink:
        stages = True  # every stage event, not only the summary

        def write(self, line: str) -> None:
            lines.append(line)

    typo = GOOD[0].replace("status", "statuz")
    replies = iter([Reply(typo, 100, 7), Reply(GOOD[0], 120, 9)])

    def complete(prompt: str) -> Reply:
        return next(replies)

    res = plan_and_answer(
        QUESTIONS[0],
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=LLMPlanner(complete), now=DEMO_NOW, audit_sink=Sink()),
    )
    assert res.status == "answered"
    events: list[dict[str, Any]] = [json.loads(line) for line in lines]
    tries = [e for e in events if e.get("event") == "qdsl.llm_attempt"]
    outcomes = [(e["attempt"], e["attempt_outcome"]) for e in tries]
    assert outcomes == [(1, "refused"), (2, "accepted")]
    assert tries[0]["error_code"].startswith("validation/") and tries[1]["error_code"] is None
    assert [(e["input_tokens"], e["output_tokens"]) for e in tries] == [(100, 7), (120, 9)]
    assert all(e["elapsed_ms"] >= 0 and e["prompt_chars"] > 0 for e in tries)
    assert all("dropped" not in e for e in tries)
    assert [a.input_tokens for a in res.attempts] == [100, 120]
    (summary,) = [e for e in events if e.get("event") == "qdsl.result"]
    assert summary["input_tokens"] == [100, 120] and summary["output_tokens"] == [7, 9]
    assert summary["attempt_error_codes"][1] is None and len(summary["attempt_elapsed_ms"]) == 2
