"""Audit events per stage keyed by trace_id, with no values or row data; the asyncio twin."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, aplan_and_answer, plan_and_answer
from qdsl.audit import ALLOWED_KEYS, Audit, MemorySink, audit_path, read_tail, use_sink
from qdsl.facts.db import make_async_engine
from qdsl.facts.demo import DEMO_NOW

QUESTIONS = [
    "帮我看看系统里面有没有 A 股项目",
    "Is there a project about Hong Kong equities?",
    "有多少个进行中的项目",
    "项目 64 现在什么状态",
    "Why did run 12 fail?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_stage_is_audited_without_values(sqlite_engine: Engine, question: str) -> None:
    sink = MemorySink()
    res = plan_and_answer(
        question, "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW, audit_sink=sink)
    )
    assert res.status == "answered"
    stages = [e["stage"] for e in sink.events]
    assert stages == ["request", "gate", "plan", "execute", "verify", "result"]
    assert {e["trace_id"] for e in sink.events} == {res.trace_id}
    by_stage = {e["stage"]: e for e in sink.events}
    assert by_stage["plan"]["plan_hash"] and "elapsed_ms" in by_stage["plan"]
    assert by_stage["execute"]["sql_fingerprints"] and by_stage["execute"]["template"]
    assert by_stage["execute"]["row_count"] >= 1
    assert by_stage["verify"]["outcome"] == "pass"
    hexes = {"trace_id", "plan_hash", "sql_fingerprints", "execution_id", "timestamp"}
    words: list[str] = []
    for event in sink.events:
        assert set(event) <= ALLOWED_KEYS | {"trace_id", "event", "timestamp"}
        for key, value in event.items():
            if key in hexes:
                continue
            values = value if isinstance(value, list) else [value]
            # Numbers (timings, counts) are not values; strings are where values would leak.
            words.extend(v.casefold() for v in values if isinstance(v, str))
    assert all(c in "0123456789abcdef" for c in by_stage["plan"]["plan_hash"])
    assert res.plan is not None
    secrets = [str(f.value).casefold() for f in res.plan.filters]
    secrets += ["a股", "a-share", "港股", "hong kong", question.casefold()]
    secrets += [w.casefold() for w in res.text.split() if len(w) > 12]
    for secret in secrets:
        assert not any(secret in w for w in words), secret


def test_values_passed_to_the_audit_are_dropped() -> None:
    sink = MemorySink()
    Audit("t", sink).event("execute", row_count=3, value="A股", rows=[{"title": "x"}])
    (event,) = sink.events
    assert event["row_count"] == 3 and event["dropped"] == ["rows", "value"]
    assert "A股" not in sink.lines[0]


def test_gate_decision_is_audited(sqlite_engine: Engine) -> None:
    with use_sink(MemorySink()) as sink:
        res = plan_and_answer("确认", "t1", engine=sqlite_engine)
    assert isinstance(sink, MemorySink)
    assert [e["stage"] for e in sink.events] == ["request", "gate", "result"]
    assert sink.events[1]["kind"] == "protocol_reply" and sink.events[2]["status"] == "gated"
    assert sink.events[2]["trace_id"] == res.trace_id


def test_one_summary_per_request_in_the_state_dir_and_the_env_target(
    sqlite_engine: Engine,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("QDSL_AUDIT_LOG", raising=False)
    first = plan_and_answer(
        "现在有多少个项目", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # on by default, but into the state dir
    (event,) = read_tail(audit_path(), 10)
    assert event["trace_id"] == first.trace_id and event["stage"] == "result"
    log = tmp_path / "audit.jsonl"
    monkeypatch.setenv("QDSL_AUDIT_LOG", str(log))
    res = plan_and_answer(
        "现在有多少个项目", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert [x["trace_id"] for x in lines] == [res.trace_id]
    assert [e["trace_id"] for e in read_tail(audit_path(), 10)] == [first.trace_id, res.trace_id]
    monkeypatch.setenv("QDSL_AUDIT_LOG", "stderr")
    plan_and_answer(
        "现在有多少个项目", "t1", engine=sqlite_engine, options=AnswerOptions(now=DEMO_NOW)
    )
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1


@pytest.mark.parametrize(
    ("question", "contract"),
    [
        ("帮我看看系统里面有没有 A 股项目", "yes_no_with_evidence"),
        ("现在有多少个项目", "count_scalar"),
        ("Compare project 64 with project 65", "comparison_with_basis"),
    ],
)
def test_async_twin_gives_the_same_answer(
    engine: Engine, db_url: str, question: str, contract: str
) -> None:
    sync = plan_and_answer(question, "t1", engine=engine, options=AnswerOptions(now=DEMO_NOW))

    async def go() -> object:
        aengine = make_async_engine(db_url)
        try:
            return await aplan_and_answer(
                question, "t1", engine=aengine, options=AnswerOptions(now=DEMO_NOW)
            )
        finally:
            await aengine.dispose()

    res = asyncio.run(go())
    assert res.status == sync.status == "answered"  # type: ignore[attr-defined]
    assert res.answer_contract.value == contract  # type: ignore[attr-defined]
    assert res.data == sync.data and res.text == sync.text  # type: ignore[attr-defined]
    assert res.verdict.ok  # type: ignore[attr-defined]


def test_async_twin_gates_and_defaults_to_the_demo() -> None:
    res = asyncio.run(aplan_and_answer("好的", "t1"))
    assert res.status == "gated"
    res = asyncio.run(aplan_and_answer("Are there any A-share projects?", "t1"))
    assert res.status == "answered" and res.data["exists"] is True and res.language == "en"


def test_async_twin_reads_linkable_values_off_the_event_loop(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The value index is read synchronously (a sync engine on the same URL);
    the async twin must not do that on the event loop's thread."""
    from qdsl.facts import value_index

    seen: list[bool] = []
    real = value_index.DatabaseValues.values_for

    def probe(self: value_index.DatabaseValues, tenant_id: str) -> object:
        try:
            asyncio.get_running_loop()
            seen.append(True)  # called on the loop's thread: it would block the loop
        except RuntimeError:
            seen.append(False)
        return real(self, tenant_id)

    monkeypatch.setattr(value_index.DatabaseValues, "values_for", probe)

    async def go() -> object:
        aengine = make_async_engine(db_url)
        try:
            return await aplan_and_answer(
                "现在有多少个项目", "t1", engine=aengine, options=AnswerOptions(now=DEMO_NOW)
            )
        finally:
            await aengine.dispose()

    res = asyncio.run(go())
    assert res.status == "answered"  # type: ignore[attr-defined]
    assert seen == [False]
