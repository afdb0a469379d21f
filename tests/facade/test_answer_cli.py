"""`qdsl ask`, `qdsl verify` and the verified `qdsl run` through the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from qdsl.cli.main import cli

ENVELOPE_KEYS = {
    "status",
    "query_type",
    "answer_contract",
    "text",
    "answer",
    "evidence",
    "plan",
    "verdict",
    "trace_id",
    "error",
}


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--json", *args], input=stdin)


def data_of(result: Result) -> dict[str, Any]:
    envelope = json.loads(result.stdout)
    assert envelope["ok"] is True and envelope["schemaVersion"] == 1
    payload: dict[str, Any] = envelope["data"]
    return payload


def test_ask_done_when(sqlite_url: str) -> None:
    res = invoke(["--db", sqlite_url, "ask", "--tenant", "t1", "帮我看看系统里面有没有 A 股项目"])
    assert res.exit_code == 0, res.stderr
    data = data_of(res)
    assert set(data) >= ENVELOPE_KEYS
    assert data["status"] == "answered"
    assert data["answer_contract"] == "yes_no_with_evidence"
    assert data["answer"]["exists"] is True
    facts = [e for e in data["evidence"] if e["kind"] == "fact"]
    assert facts and all(e["id"].startswith("fact:") and e["source_ref"] for e in facts)
    assert data["verdict"]["outcome"] == "pass"
    assert data["error"] is None
    assert json.loads(res.stdout)["meta"]["traceId"] == data["trace_id"]


def test_ask_shows_the_typed_error_that_ended_the_answer(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer ended by a typed error (the planner's API down) carries it in the
    envelope, not only in the Python AnswerResult."""
    from qdsl.dsl.errors import PlanError
    from qdsl.planner import RulePlanner

    def unavailable(self: object, reading: object, **_: object) -> object:
        raise PlanError(
            "llm_unavailable", "the planner's API did not answer", hint="retry", retryable=True
        )

    monkeypatch.setattr(RulePlanner, "plan_reading", unavailable)
    res = invoke(["--db", sqlite_url, "ask", "--tenant", "t1", "现在有多少个项目"])
    data = data_of(res)
    assert data["status"] == "insufficient_evidence" and data["answer"] == {}
    error = data["error"]
    assert error["code"] == "validation/llm_unavailable" and error["retryable"] is True
    assert error["message"] == "the planner's API did not answer" and error["hint"] == "retry"


def test_ask_count_gated_and_english(sqlite_url: str) -> None:
    count = data_of(invoke(["--db", sqlite_url, "ask", "--tenant", "t1", "现在有多少个项目"]))
    assert count["answer_contract"] == "count_scalar" and count["answer"] == {"count": 14}
    gated = data_of(invoke(["--db", sqlite_url, "ask", "--tenant", "t1", "确认"]))
    assert gated["status"] == "gated" and gated["gate_kind"] == "protocol_reply"
    en = data_of(
        invoke(["--db", sqlite_url, "ask", "--tenant", "t2", "Are there any A-share projects?"])
    )
    assert en["language"] == "en" and en["text"].startswith("No.")
    assert en["answer"] == {"exists": False, "matches": []}


def test_ask_uses_the_embedded_demo_by_default() -> None:
    res = invoke(["ask", "--tenant", "t1", "有多少个进行中的项目"])
    assert res.exit_code == 0, res.stderr
    assert data_of(res)["answer"] == {"count": 8}
    assert res.stderr == ""  # audit is quiet by default


def test_ask_non_internal_route_exits_6() -> None:
    res = invoke(["ask", "--tenant", "t1", "--route-mode", "web", "有没有 A 股项目"])
    assert res.exit_code == 6
    assert res.stdout == ""
    assert json.loads(res.stderr)["error"]["subtype"] == "route_not_internal"


def test_ask_audit_to_stderr_keeps_stdout_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDSL_AUDIT_LOG", "stderr")
    res = invoke(["ask", "--tenant", "t1", "现在有多少个项目"])
    assert res.exit_code == 0
    json.loads(res.stdout)  # exactly one envelope
    events = [json.loads(line) for line in res.stderr.splitlines()]
    assert [e["stage"] for e in events][-1] == "result"


def test_run_is_verified(sqlite_url: str) -> None:
    res = invoke(
        [
            "--db",
            sqlite_url,
            "run",
            "--tenant",
            "t1",
            "--plan",
            'existence project where market_theme ~= "A股"',
        ]
    )
    assert res.exit_code == 0, res.stderr
    data = data_of(res)
    assert set(data) >= ENVELOPE_KEYS
    assert data["status"] == "answered" and data["verdict"]["outcome"] == "pass"
    assert data["answer"]["exists"] is True and data["result"]["rows"]


def _run_and_answer(sqlite_url: str) -> tuple[str, dict[str, Any]]:
    plan = 'existence project where market_theme ~= "A股"'
    data = data_of(invoke(["--db", sqlite_url, "run", "--tenant", "t1", "--plan", plan]))
    return plan, data


def test_verify_passes_a_good_answer_and_fails_a_bad_one(sqlite_url: str) -> None:
    plan, data = _run_and_answer(sqlite_url)
    result = json.dumps(data["result"], ensure_ascii=False)
    good = json.dumps(data, ensure_ascii=False)  # the run envelope data is itself an answer
    res = invoke(
        [
            "--db",
            sqlite_url,
            "verify",
            "--tenant",
            "t1",
            "--plan",
            plan,
            "--result",
            result,
            "--answer",
            good,
        ]
    )
    assert res.exit_code == 0, res.stderr
    assert data_of(res)["outcome"] == "pass"
    total = data["result"]["baseline_total"]
    theirs = {
        "contract": "yes_no_with_evidence",
        "text": f"有，系统里共有 {total} 个项目。",
        "data": {"exists": True, "matches": []},
        "cited_evidence": ["fact:999"],
        "language": "zh",
    }
    res = invoke(
        [
            "--db",
            sqlite_url,
            "verify",
            "--tenant",
            "t1",
            "--plan",
            plan,
            "--result",
            result,
            "--answer",
            "-",
        ],
        stdin=json.dumps(theirs),
    )
    assert res.exit_code == 5, res.stderr
    verdict = data_of(res)
    assert verdict["outcome"] != "pass"
    assert {"evidence_backed", "no_total_count_substitution", "covers_conditions"} <= set(
        verdict["failed"]
    )


def test_verify_checks_the_plan_answers_the_question(sqlite_url: str) -> None:
    plan = 'count project where market_theme ~= "A股"'
    data = data_of(invoke(["--db", sqlite_url, "run", "--tenant", "t1", "--plan", plan]))
    args = [
        "--db",
        sqlite_url,
        "verify",
        "--tenant",
        "t1",
        "--plan",
        plan,
        "--result",
        json.dumps(data["result"]),
        "--answer",
        json.dumps(data),
    ]
    assert invoke(args).exit_code == 0
    res = invoke([*args, "--question", "有没有 A 股项目"])
    assert res.exit_code == 5
    assert data_of(res)["failed"] == ["contract_matches_query_type"]


def test_verify_reads_the_question_not_the_plan(sqlite_url: str) -> None:
    plan = "count project"
    data = data_of(invoke(["--db", sqlite_url, "run", "--tenant", "t1", "--plan", plan]))
    args = [
        "--db",
        sqlite_url,
        "verify",
        "--tenant",
        "t1",
        "--plan",
        plan,
        "--result",
        json.dumps(data["result"]),
        "--answer",
        json.dumps(data),
    ]
    assert invoke(args).exit_code == 0
    res = invoke([*args, "--question", "How many projects were created in 2026?"])
    assert res.exit_code == 5
    verdict = data_of(res)
    assert verdict["failed"] == ["question_covered"]
    assert verdict["outcome"] == "retry_with_clarified_plan"
    messages = [i["message"] for i in verdict["issues"] if i["check"] == "question_covered"]
    assert any(m.startswith("“in 2026” is not applied") for m in messages), messages


def test_verify_bad_json_is_a_usage_error(sqlite_url: str) -> None:
    res = invoke(
        ["verify", "--tenant", "t1", "--plan", "count project", "--result", "{", "--answer", "{}"]
    )
    assert res.exit_code == 2
    assert json.loads(res.stderr)["error"]["subtype"] == "bad_result_json"


def test_list_suggests_the_status_of_its_first_item_and_that_suggestion_runs(
    sqlite_url: str,
) -> None:
    res = invoke(["--db", sqlite_url, "ask", "--tenant", "t1", "列出所有暂停的项目"])
    assert res.exit_code == 0, res.stderr
    envelope = json.loads(res.stdout)
    first = envelope["data"]["answer"]["items"][0]
    (suggestion,) = envelope["meta"]["next"]
    assert suggestion["operation"] == "run"
    argv = suggestion["argv"]
    assert argv[:5] == ["qdsl", "--json", "run", "--tenant", "t1"]
    follow = invoke(["--db", sqlite_url, *argv[2:]])
    assert follow.exit_code == 0, follow.stderr
    snapshot = data_of(follow)
    assert snapshot["answer_contract"] == "entity_snapshot"
    assert snapshot["answer"]["entity"]["id"] == first["id"]


def test_verify_reads_stdin_as_utf8_and_refuses_other_bytes(sqlite_url: str) -> None:
    args = ["--json", "--db", sqlite_url, "verify", "--tenant", "t1", "--plan", "count project"]
    result = CliRunner().invoke(
        cli, [*args, "--result", "-", "--answer", "{}"], input=b"\xff\xfe{}"
    )
    assert result.exit_code == 2
    assert json.loads(result.stderr)["error"]["code"] == "usage/bad_encoding"
