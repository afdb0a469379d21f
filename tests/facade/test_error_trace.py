"""Every error envelope carries the trace id of its audit line (issue 25, L5).

A representative failing call of each path an error leaves by (click's usage
errors, an argument that is not UTF-8, a command body before and inside the
pipeline, a plan, policy, database, ref and chain error, a defect, an MCP
tool call) prints an envelope whose `meta.traceId` names exactly one audit
line, which records that error's code.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qdsl.audit import audit_path, read_tail
from qdsl.cli import main as cli_main

SCOPED = json.dumps(
    {
        "plan_version": "v1",
        "query_type": "count",
        "entity_type": "project",
        "answer_contract": "count_scalar",
        "scope": {"tenant_id": "t2"},
    }
)

FAILING: list[tuple[list[str], str]] = [
    (["--json", "--bogus"], "usage/bad_arguments"),
    (["--json", "ask", "how many projects", "--tenant", "t1", "--tenant"], "usage/bad_arguments"),
    (["--json", "parse", "--plan", "count \udcff"], "usage/bad_encoding"),
    (["--json", "ask", "how many projects", "--tenant", " "], "usage/missing_tenant"),
    (
        ["--json", "ask", "how many projects", "--tenant", "t1", "--route-mode", "external"],
        "policy/route_not_internal",
    ),
    (["--json", "run", "--plan", "count nothing", "--tenant", "t1"], "validation/unknown_entity"),
    (["--json", "run", "--plan", SCOPED, "--tenant", "t1"], "policy/tenant_scope_mismatch"),
    (["--json", "parse", "--plan", "list projec x"], "validation/syntax_error"),
    (["--json", "compile", "--plan", "count project where zz = 1"], "validation/unknown_field"),
    (["--json", "refs", "get", "r20260101000000000-0000000000000000", "data"], "ref/ref_not_found"),
    (
        ["--json", "verify", "--plan", "count project", "--tenant", "t1", "--result", "{}",
         "--answer", "{}"],
        "policy/untrusted_result",
    ),
    (["--json", "--catalog", "/nonexistent/catalog.toml", "catalog"], "usage/catalog_unreadable"),
    (
        ["--json", "chain", "--steps", '[{"op": "parse", "input": {"plan": "count"}}]'],
        "validation/syntax_error",
    ),
]


def _call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as done:
        cli_main.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    code = done.value.code
    return code if isinstance(code, int) else 1, json.loads(err[-1])


def _lines_of(trace_id: str) -> list[dict[str, Any]]:
    return [e for e in read_tail(audit_path(), 10_000) if e.get("trace_id") == trace_id]


def _assert_audited(env: dict[str, Any]) -> None:
    trace_id = env["meta"]["traceId"]
    assert isinstance(trace_id, str) and len(trace_id) == 32
    (line,) = _lines_of(trace_id)
    assert line["status"] == "error"
    assert line["error_code"] == env["error"]["code"]


@pytest.mark.parametrize(("argv", "code"), FAILING, ids=[c for _a, c in FAILING])
def test_every_failing_call_names_its_audit_line(
    argv: list[str], code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exit_code, env = _call(argv, capsys)
    assert env["ok"] is False and env["error"]["code"] == code
    assert exit_code not in (0, 1)
    _assert_audited(env)


def test_database_faults_name_their_audit_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"sqlite:///{tmp_path / 'missing.sqlite3'}"
    for argv in (
        ["--json", "--db", missing, "ask", "how many projects", "--tenant", "t1"],
        ["--json", "--db", missing, "run", "--plan", "count project", "--tenant", "t1"],
    ):
        exit_code, env = _call(argv, capsys)
        assert (exit_code, env["error"]["code"]) == (8, "database/database_missing")
        _assert_audited(env)
        assert _lines_of(env["meta"]["traceId"])[0]["tenant_id"] == "t1"


def test_a_defect_names_its_audit_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "parse", "qdsl.cli.no_such_module:parse_cmd")
    exit_code, env = _call(["--json", "parse", "--plan", "count project"], capsys)
    assert (exit_code, env["error"]["code"]) == (1, "internal/unexpected")
    _assert_audited(env)


def test_every_failing_call_of_a_run_leaves_one_line_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Distinct calls, distinct lines: no trace id is shared."""
    ids = []
    for argv, _code in FAILING[3:8]:
        _exit, env = _call(argv, capsys)
        ids.append(env["meta"]["traceId"])
    assert len(set(ids)) == len(ids)
    assert sum(1 for e in read_tail(audit_path(), 10_000) if e["trace_id"] in ids) == len(ids)


def test_an_answer_and_its_line_share_the_trace_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main.main(["--json", "ask", "how many projects", "--tenant", "t1"])
    env = json.loads(capsys.readouterr().out)
    assert env["meta"]["traceId"] == env["data"]["trace_id"]
    (line,) = _lines_of(env["meta"]["traceId"])
    assert line["status"] == env["data"]["status"]


def test_mcp_tool_errors_name_their_audit_line() -> None:
    from qdsl.mcp.service import ServerConfig, Service
    from qdsl.mcp.tools import call_tool

    service = Service(ServerConfig())

    async def calls() -> list[Any]:
        return [
            await call_tool(service, "t1", "compile_plan", {"plan": "count project where zz = 1"}),
            await call_tool(service, "t1", "compile_plan", {"plan": 7}),
        ]

    for wire in asyncio.run(calls()):
        env = wire["structuredContent"]
        assert env["ok"] is False
        _assert_audited(env)
        assert _lines_of(env["meta"]["traceId"])[0]["tenant_id"] == "t1"


def test_plan_and_answer_errors_carry_the_trace_id_of_their_line() -> None:
    """Before the pipeline's own audit began (a blank tenant) or inside it (a policy
    error): the raised error names its one line in the caller's sink."""
    from qdsl import AnswerOptions, plan_and_answer
    from qdsl.audit import MemorySink
    from qdsl.dsl.errors import QdslError

    for tenant, route, code in ((" ", "internal", "usage/missing_tenant"),
                                ("t1", "external", "policy/route_not_internal")):
        sink = MemorySink()
        with pytest.raises(QdslError) as info:
            plan_and_answer(
                "how many projects", tenant,
                options=AnswerOptions(audit_sink=sink, route_mode=route),
            )
        assert info.value.code == code
        results = [e for e in sink.events if e["stage"] == "result"]
        assert [e["trace_id"] for e in results] == [info.value.trace_id]
        assert results[0]["error_code"] == code
