"""Every `tools/call` over stdio is served by the SDK's dispatcher: a plain
call and one carrying a `_meta` answer alike (less their random ids), and the
server log says the SDK handed over each call. Also: before `initialize`, at
every handshake version, cancelled by the client, and in flight when stdin
closes or SIGTERM comes, either form gives the same outcome. The SDK's own
serializer leaves the results built here unchanged at every handshake version,
byte for byte.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import QDSL, WAIT_S, log_events, server_env, stdio_session
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from qdsl.dsl.errors import PolicyError
from qdsl.mcp import errors
from qdsl.mcp.results import tool_result

SLOW_PLAN = 'list project where title contains "a"'
ROWS = 300  # tenant t3's projects (see test_mcp_timeouts)
VOLATILE = {"trace_id", "traceId", "execution_id", "mac", "elapsed_ms"}
SDK_META = {"_meta": {"progressToken": "via-the-sdk"}}


def _init(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }


def _steady(value: Any) -> Any:
    """`value` less what differs on every call (ids, the MAC, timings)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        try:
            return _steady(json.loads(value))
        except ValueError:
            return value
    return value


class Raw:
    """A server on pipes, spoken to in raw JSON-RPC lines."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, module: str = "") -> None:
        command = [QDSL, *args]
        if module:
            here = str(Path(__file__).parent)
            env = {**env, "PYTHONPATH": here}
            command = [sys.executable, "-m", module, *args]
        self.log = log
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
            )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, id_: int | str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        return self.receive()

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=WAIT_S))
        return message

    def initialize(self, version: str = "2025-11-25") -> None:
        assert "result" in self.request(0, "initialize", _init(version))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close_stdin(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(WAIT_S)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT_S)

    def dispatches(self) -> list[tuple[str, str]]:
        calls = [e for e in log_events(self.log) if e["event"] == "tool_call"]
        return [(c["tool"], c["dispatch"]) for c in calls]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ask", {"question": "list all projects"}),
    ("ask", {"question": "有多少个进行中的项目"}),
    ("ask", {"question": ""}),  # refused by the tool's own model
    ("ask", {"question": "hi", "tenant": "t2"}),  # no tool takes a tenant
    ("run_plan", {"plan": "count project"}),
    ("run_plan", {"plan": {"query_type": "count", "entity_type": "project"}}),
    ("run_plan", {"plan": "list nothing_such"}),
    ("compile_plan", {"plan": "list project limit 3", "dialect": "sqlite"}),
    ("describe_catalog", {"entity": "project"}),
    ("plan_schema", {}),
    ("get_ref", {"ref_id": "r-none"}),
]


def test_both_forms_answer_every_tool_alike_through_the_sdk(tmp_path: Path) -> None:
    server = Raw(["mcp", "--tenant", "t1"], server_env(tmp_path / "state"), tmp_path / "log")
    try:
        server.initialize()
        for i, (name, arguments) in enumerate(CALLS):
            call = {"name": name, "arguments": arguments}
            plain = server.request(2 * i + 1, "tools/call", call)
            sdk = server.request(f"s{i}", "tools/call", {**call, **SDK_META})
            assert plain["id"] == 2 * i + 1 and sdk["id"] == f"s{i}"
            assert _steady(plain["result"]) == _steady(sdk["result"]), name
            assert list(plain["result"]) == list(sdk["result"])  # the SDK's key order
        # what the SDK refuses it refuses in either form
        unknown = {"name": "drop_tables", "arguments": {}}
        assert server.request(90, "tools/call", unknown)["error"]["code"] == -32602
        not_a_dict = {"name": "ask", "arguments": "list all projects"}
        assert server.request(91, "tools/call", not_a_dict)["error"]["code"] == -32602
        assert server.close_stdin() == 0
    finally:
        server.kill()
    assert server.dispatches() == [(n, "sdk") for n, _ in CALLS for _form in ("plain", "meta")]


def test_before_initialize_the_sdk_answers_and_every_version_answers_alike(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path / "state")
    call = {"name": "ask", "arguments": {"question": "list all projects"}}
    early = Raw(["mcp", "--tenant", "t1"], env, tmp_path / "early.log")
    try:
        refused = early.request(1, "tools/call", call)
        assert refused["error"]["code"] == -32602  # the SDK's gate: initialize first
        early.initialize()
        assert early.request(2, "tools/call", call)["result"]["isError"] is False
        assert early.close_stdin() == 0
    finally:
        early.kill()
    assert early.dispatches() == [("ask", "sdk")]

    for version in sorted(HANDSHAKE_PROTOCOL_VERSIONS):
        log = tmp_path / f"{version}.log"
        server = Raw(["mcp", "--tenant", "t1"], env, log)
        try:
            server.initialize(version)
            plain = server.request(1, "tools/call", call)["result"]
            sdk = server.request(2, "tools/call", {**call, **SDK_META})["result"]
            assert _steady(plain) == _steady(sdk) and list(plain) == list(sdk), version
            assert server.close_stdin() == 0
        finally:
            server.kill()
        assert server.dispatches() == [("ask", "sdk"), ("ask", "sdk")]


@pytest.mark.parametrize("stop", ["stdin closed", "SIGTERM"])
@pytest.mark.parametrize("meta", [{}, SDK_META], ids=["plain", "meta"])
def test_a_call_in_flight_when_the_server_stops_is_answered_connection_closed(
    stop: str, meta: dict[str, Any], sqlite_url: str, tmp_path: Path
) -> None:
    counter = tmp_path / "lower-calls"
    counter.touch()
    env = server_env(
        tmp_path / "state", QDSL_TEST_LOWER_COUNTER=str(counter), QDSL_TEST_LOWER_PAUSE_S="0.05"
    )
    args = ["--db", sqlite_url, "mcp", "--tenant", "t3"]
    server = Raw(args, env, tmp_path / "log", module="slow_lower")
    try:
        server.initialize()
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "run_plan", "arguments": {"plan": SLOW_PLAN}, **meta},
            }
        )
        _wait_for_rows(counter)
        if stop == "SIGTERM":
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(WAIT_S) == 0
        else:
            assert server.close_stdin() == 0
        closed = server.receive()
        assert closed == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32000, "message": "Connection closed"},
        }
        assert server.lines.empty()
        assert 0 < counter.stat().st_size < ROWS  # its statement was stopped
    finally:
        server.kill()
    assert server.dispatches() == [("run_plan", "sdk")]


@pytest.mark.parametrize("meta", [{}, SDK_META], ids=["plain", "meta"])
def test_a_cancelled_call_is_never_answered_and_its_statement_stops(
    meta: dict[str, Any], sqlite_url: str, tmp_path: Path
) -> None:
    counter = tmp_path / "lower-calls"
    counter.touch()
    env = server_env(
        tmp_path / "state", QDSL_TEST_LOWER_COUNTER=str(counter), QDSL_TEST_LOWER_PAUSE_S="0.05"
    )
    args = ["--db", sqlite_url, "mcp", "--tenant", "t3", "--max-concurrency", "1"]
    server = Raw(args, env, tmp_path / "log", module="slow_lower")
    try:
        server.initialize()
        slow = {"name": "run_plan", "arguments": {"plan": SLOW_PLAN}, **meta}
        server.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": slow})
        _wait_for_rows(counter)
        cancel = {"requestId": "slow", "reason": "the user gave up"}
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        # the slot is free once the statement has ended: then the next call answers
        fast_plan = {"name": "run_plan", "arguments": {"plan": "count project"}}
        while True:
            answer = server.request(2, "tools/call", fast_plan)
            assert answer["id"] == 2  # nothing ever comes for "slow"
            env_ = answer["result"]["structuredContent"]
            if not answer["result"]["isError"]:
                break
            assert env_["error"]["code"] == "policy/server_busy"
            anyio.run(anyio.sleep, 0.05)
        stopped_at = counter.stat().st_size
        assert 0 < stopped_at < ROWS
        assert server.close_stdin() == 0
        assert server.lines.empty()
    finally:
        server.kill()
    calls = [e for e in log_events(server.log) if e["event"] == "tool_call"]
    cancelled = [c["dispatch"] for c in calls if c["outcome"] == "cancelled"]
    assert cancelled == ["sdk"]


def _wait_for_rows(counter: Path) -> None:
    async def wait() -> None:
        with anyio.fail_after(WAIT_S):
            while counter.stat().st_size == 0:  # the statement is reading rows
                await anyio.sleep(0.02)

    anyio.run(wait)


def test_the_sdk_client_is_served_by_the_sdk(tmp_path: Path) -> None:
    log = tmp_path / "server.log"

    async def body() -> None:
        env = server_env(tmp_path / "state")
        async with stdio_session(["mcp", "--tenant", "t1"], env, log) as s:
            listed = await s.list_tools()
            assert len(listed.tools) == 6 and listed.tools[0].output_schema is not None
            result = await s.call_tool("ask", {"question": "list all projects"})
            assert result.is_error is False and result.structured_content is not None
            assert result.structured_content["data"]["status"] == "answered"

    anyio.run(body)
    calls = [e for e in log_events(log) if e["event"] == "tool_call"]
    assert [(c["tool"], c["dispatch"]) for c in calls] == [("ask", "sdk")]


def test_the_sdk_sends_these_results_unchanged_at_every_handshake_version() -> None:
    ok = {
        "schemaVersion": 1,
        "ok": True,
        "operation": "ask",
        "data": {"status": "answered", "text": "3 projects", "n": None, "x": [1.5, {"a": []}]},
        "warnings": [],
        "meta": {"traceId": "t", "next": []},
    }
    stored = {
        "refId": "r1",
        "resultPersisted": True,
        "outputBytes": 99999,
        "expiresAt": "2026-01-01T00:00:00.000Z",
        **ok,
    }
    busy = errors.tool_error("ask", PolicyError("server_busy", "busy", hint="wait"))
    results = [tool_result(ok), tool_result(stored), busy]
    assert [len(r["content"]) for r in results] == [1, 2, 1]  # a resource link among them
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        for result in results:
            sent = methods.serialize_server_result("tools/call", version, result)
            assert json.dumps(sent) == json.dumps(result), version
    # the 2026 era adds to a result: its requests stay the SDK's
    assert "2026-07-28" not in HANDSHAKE_PROTOCOL_VERSIONS
