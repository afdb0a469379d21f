"""The audit log is on by default: one summary event per request, no values, rotating.

Answered, refused (with the drift that led there), gated, policy errors and
database errors each leave exactly one line in the state dir's log, keyed by
trace id and tenant; the question is hashed unless QDSL_AUDIT_TEXT=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from planner_doubles import CountingAdversary
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.audit import RotatingFileSink, audit_path, read_tail
from qdsl.cli.main import cli
from qdsl.dsl.errors import PolicyError
from qdsl.dsl.normalize import PlanContext
from qdsl.facts.demo import DEMO_NOW
from qdsl.facts.engines import make_engine

NOW = AnswerOptions(now=DEMO_NOW)
SUMMARY = {"timestamp", "trace_id", "tenant_id", "question_hash", "plan_hash", "template",
           "sql_fingerprints", "outcome", "failed", "status", "elapsed_ms"}


def _events() -> list[dict[str, object]]:
    return read_tail(audit_path(), 1000)


def test_an_answered_question_leaves_one_summary(sqlite_engine: Engine) -> None:
    res = plan_and_answer("有没有 A 股项目", "t1", engine=sqlite_engine, options=NOW)
    (event,) = _events()
    assert set(event) >= SUMMARY
    assert event["trace_id"] == res.trace_id and event["tenant_id"] == "t1"
    assert event["status"] == "answered" and event["outcome"] == "pass"
    assert event["template"] and event["sql_fingerprints"]
    line = audit_path().read_text(encoding="utf-8")
    for secret in ("有没有", "A 股", "a股", "A股"):
        assert secret not in line  # neither the question nor the filter value


def test_question_text_only_when_asked_for(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QDSL_AUDIT_TEXT", "1")
    plan_and_answer("有多少个港股项目", "t2", engine=sqlite_engine, options=NOW)
    (event,) = _events()
    assert event["question"] == "有多少个港股项目"


def test_a_refused_answer_records_its_drift(sqlite_engine: Engine) -> None:
    adversary = CountingAdversary(keep_filters=True)
    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=adversary, now=DEMO_NOW),
    )
    assert res.status == "refused"
    (event,) = _events()
    assert event["status"] == "refused" and event["trace_id"] == res.trace_id
    assert "contract_matches_query_type" in event["drift"]  # type: ignore[operator]


def test_policy_errors_leave_one_summary(sqlite_engine: Engine) -> None:
    with pytest.raises(PolicyError):
        plan_and_answer(
            "有没有 A 股项目", "t1", engine=sqlite_engine, options=AnswerOptions(route_mode="web")
        )
    with pytest.raises(PolicyError):
        plan_and_answer(
            "有没有 A 股项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(context=PlanContext(tenant_id="t2")),
        )
    codes = [(e["status"], e["error_code"], e["tenant_id"]) for e in _events()]
    assert codes == [
        ("error", "policy/route_not_internal", "t1"),
        ("error", "policy/tenant_scope_mismatch", "t1"),
    ]


def test_a_database_error_leaves_one_summary(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    try:
        res = None
        with pytest.raises(Exception):  # noqa: B017 - the error type is tested elsewhere
            res = plan_and_answer("有多少个项目", "t1", engine=engine, options=NOW)
    finally:
        engine.dispose()
    assert res is None
    (event,) = _events()
    assert event["status"] == "error" and str(event["error_code"]).startswith("database/")


def test_gated_and_clarify_are_audited_too(sqlite_engine: Engine) -> None:
    plan_and_answer("确认", "t1", engine=sqlite_engine)
    plan_and_answer("嗯", "t1", engine=sqlite_engine)
    assert [e["status"] for e in _events()] == ["gated", "clarify"]


def test_audit_can_be_turned_off(sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDSL_AUDIT", "off")
    plan_and_answer("确认", "t1", engine=sqlite_engine)
    assert not audit_path().exists()


def test_the_file_rotates_and_keeps_a_bounded_history(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    sink = RotatingFileSink(path, max_bytes=200, keep=2)
    for i in range(42):  # 4 lines fill a file: 10 rotations, 2 lines in the current one
        sink.write(json.dumps({"n": i, "pad": "x" * 40}))
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert names == ["a.jsonl", "a.jsonl.1", "a.jsonl.2"]
    assert all(p.stat().st_size <= 400 for p in tmp_path.glob("a.jsonl*"))
    assert path.stat().st_mode & 0o777 == 0o600
    numbers = [e["n"] for e in read_tail(path, 1000)]
    assert numbers == sorted(numbers) and numbers[-1] == 41  # newest last, in order


def test_audit_tail_shows_the_latest_events(sqlite_url: str) -> None:
    runner = CliRunner()
    for tenant in ("t1", "t2", "t1"):
        done = runner.invoke(cli, ["--json", "--db", sqlite_url, "ask", "--tenant", tenant,
                                   "有多少个项目"])
        assert done.exit_code == 0, done.stderr
    tail = runner.invoke(cli, ["--json", "audit", "tail", "-n", "2"])
    events = json.loads(tail.stdout)["data"]["events"]
    assert [e["tenant_id"] for e in events] == ["t2", "t1"]
    only = runner.invoke(cli, ["--json", "audit", "tail", "--tenant", "t2"])
    assert [e["tenant_id"] for e in json.loads(only.stdout)["data"]["events"]] == ["t2"]
    human = runner.invoke(cli, ["audit", "tail", "-n", "1"])
    assert "t1" in human.stdout and "answered" in human.stdout


def test_run_failures_are_audited(sqlite_url: str) -> None:
    plan = json.dumps({"query_type": "count", "entity_type": "project",
                       "scope": {"tenant_id": "t2", "tenant_bound": True}})
    res = CliRunner().invoke(cli, ["--json", "--db", sqlite_url, "run", "--tenant", "t1",
                                   "--plan", plan])
    assert res.exit_code == 6, res.output
    (event,) = _events()
    assert event["status"] == "error" and event["tenant_id"] == "t1"
    assert event["error_code"] == json.loads(res.stderr)["error"]["code"]


def test_every_line_is_on_disk_when_the_process_exits(tmp_path: Path) -> None:
    """Lines are written as requests end, not buffered: a process that exits at
    once (no close, no flush, os._exit even) has left every summary behind."""
    script = (
        "import os\n"
        "from qdsl.audit import Audit\n"
        "for i in range(50):\n"
        "    a = Audit(f'trace{i}')\n"
        "    a.begin('t1', 'q')\n"
        "    a.event('result', status='answered')\n"
        "os._exit(0)\n"
    )
    state = tmp_path / "state"
    state.mkdir()
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    env.pop("QDSL_AUDIT", None)
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    events = read_tail(state / "audit" / "audit.jsonl", 1000)
    assert [e["trace_id"] for e in events] == [f"trace{i}" for i in range(50)]


class _Refuses:
    """A sink that discards lines, and fails the test if one is rendered for it."""

    stages = False
    discards = True

    def write(self, line: str) -> None:
        raise AssertionError(f"rendered for a discarding sink: {line}")


def test_a_discarding_sink_costs_no_rendering(sqlite_engine: Engine) -> None:
    options = AnswerOptions(now=DEMO_NOW, audit_sink=_Refuses())
    res = plan_and_answer("有多少个项目", "t1", engine=sqlite_engine, options=options)
    assert res.status == "answered"


@given(st.lists(st.integers(min_value=0, max_value=4_102_444_800 * 10**9), max_size=6))
def test_the_timestamp_is_what_datetime_prints(moments: list[int]) -> None:
    """The per-second text it reuses never leaks into another second."""
    from datetime import UTC, datetime

    from qdsl import audit

    for ns in sorted(moments) + moments:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(audit.time, "time_ns", lambda ns=ns: ns)
            expected = datetime.fromtimestamp(ns // 10**6 / 1000, UTC)
            assert audit.timestamp() == expected.isoformat(timespec="milliseconds")
