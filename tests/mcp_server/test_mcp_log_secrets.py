"""The server's log holds no secret and no tenant data (issue 25, F2 / build item 2).

Every failure path of the MCP tests is run against a server (HTTP, then
stdio), the server standing in as `faulty_refs` so that one `get_ref` also
fails unexpectedly with the stored envelope in its frame's locals and in its
message (as a failing `get_ref` logged a tenant's envelope, and a bad byte in
the tokens file put the bearer token in the log 4 times). Then the log is
searched for every token used (revoked ones too), every question asked and
every answer given (the rendered text and each item's label): none is there.
The failures are still logged: each refusal and the defect's line (its
exception type and frames) are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_helpers import (
    WAIT_S,
    HttpServer,
    cli_json,
    error_of,
    http_session,
    log_events,
    server_env,
    stdio_session,
    structured,
)

from qdsl.envelope.store import open_store

QUESTIONS = ("list all projects", "列出所有项目")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENV = {"QDSL_REF_THRESHOLD": "1024"}


def _answers(env: dict[str, Any], full: dict[str, Any]) -> set[str]:
    """What an answer gave away: its text and its items' labels."""
    data = full["data"]
    found = {data["text"]}
    for item in (data.get("answer") or {}).get("items") or []:
        found |= {str(item[k]) for k in ("label", "title") if len(str(item.get(k, ""))) >= 4}
    return found


async def _failures(s: ClientSession, secrets: set[str], other_ref: str) -> list[str]:
    """Every failure path a session can take; the codes it got."""
    codes: list[str] = []
    for question in QUESTIONS:
        env = structured(await s.call_tool("ask", {"question": question}))
        read = await s.read_resource(f"qdsl://refs/{env['refId']}")
        full = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        secrets |= {question, *_answers(env, full)}
        ref_id = env["refId"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_ref", {"ref_id": ref_id, "expr": "explode"}),  # the defect
        ("get_ref", {"ref_id": ref_id, "expr": "@" + "|[@,@]" * 19}),
        ("get_ref", {"ref_id": ref_id, "expr": "[" * 1500 + "@" + "]" * 1500}),
        ("get_ref", {"ref_id": ref_id, "expr": "data.answer.items[?"}),
        ("get_ref", {"ref_id": other_ref}),
        ("run_plan", {"plan": "list nothing_such"}),
        (
            "run_plan",
            {
                "plan": {
                    "query_type": "list",
                    "entity_type": "project",
                    "scope": {"tenant_id": "t2"},
                }
            },
        ),
        ("ask", {"question": "x" * (5 * 1024 * 1024)}),
        ("ask", {"question": QUESTIONS[0], "tenant": "t2"}),
        ("compile_plan", {"plan": "count project where nothing_such = 1"}),
    ]
    for tool, args in calls:
        codes.append(error_of(await s.call_tool(tool, args))["code"])
    with pytest.raises(MCPError):
        await s.call_tool("drop_tables", {})
    with pytest.raises(MCPError):
        await s.read_resource("qdsl://refs/not-a-ref")
    return codes


def _clean(log: Path, secrets: set[str]) -> None:
    text = log.read_text()
    present = sorted(s for s in secrets if s in text)
    assert present == [], present
    defect = [e for e in log_events(log) if e["event"] == "unexpected_failure"]
    assert len(defect) == 1 and defect[0]["exception"][0]["exc_type"] == "RuntimeError"
    assert "locals" not in str(defect[0]) and "exc_value" not in str(defect[0])


def test_no_token_question_or_answer_in_the_http_servers_log(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("QDSL_STATE_DIR", str(state))
    server = HttpServer.start(
        ["--db", sqlite_url], server_env(state, **ENV), state, module="faulty_refs"
    )
    secrets: set[str] = set()
    try:
        t1, _ = server.token("t1")
        t2, _ = server.token("t2")
        revoked, revoked_id = server.token("t1")
        cli_json(["mcp", "token", "revoke", revoked_id], state)
        secrets |= {t1, t2, revoked}
        other = open_store().put("run", b'{"ok": true, "data": {}}', tenant="t2")
        codes: list[str] = []

        async def body() -> None:
            async with http_session(server.url, t1) as s:
                codes.extend(await _failures(s, secrets, other.ref_id))

        anyio.run(body)
        assert "internal/unexpected" in codes and "ref/ref_not_found" in codes
        body_with_question = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": QUESTIONS[0]}},
        }
        with httpx2.Client(timeout=WAIT_S) as client:
            for token in (None, "qdsl_" + "y" * 43, revoked, "not-even-a-prefix"):
                headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
                assert (
                    client.post(server.url, json=body_with_question, headers=headers).status_code
                    == 401
                )
            bad = client.post(
                server.url,
                content=b'{"jsonrpc": "2.0", "id": 1, "meth',
                headers={**ACCEPT, "Authorization": f"Bearer {t1}"},
            )
            assert bad.status_code == 400
            tokens = state / "mcp" / "tokens.jsonl"
            kept = tokens.read_bytes()
            tokens.write_bytes(kept + b"\xff" + t1.encode() + b"\n")  # a bad line holding a token
            auth = {**ACCEPT, "Authorization": f"Bearer {t1}"}
            assert client.post(server.url, json=body_with_question, headers=auth).status_code == 503
            tokens.write_bytes(kept)
    finally:
        assert server.stop() == 0
    reasons = [e["reason"] for e in log_events(server.log) if e["event"] == "request_refused"]
    assert reasons == [
        "no_token",
        "unknown_token",
        "revoked_token",
        "unknown_token",
        "tokens_unreadable",
    ]
    _clean(server.log, secrets)


def test_no_question_or_answer_in_the_stdio_servers_log(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("QDSL_STATE_DIR", str(state))
    env = server_env(state, **ENV)
    other = open_store().put("run", b'{"ok": true, "data": {}}', tenant="t2")
    secrets: set[str] = set()
    codes: list[str] = []
    log = tmp_path / "server.log"

    async def body() -> None:
        args = ["--db", sqlite_url, "mcp", "--tenant", "t1"]
        async with stdio_session(args, env, log, module="faulty_refs") as s:
            codes.extend(await _failures(s, secrets, other.ref_id))

    anyio.run(body)
    assert "internal/unexpected" in codes and "ref/ref_not_found" in codes
    _clean(log, secrets)
