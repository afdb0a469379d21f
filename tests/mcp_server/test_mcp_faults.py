"""`qdsl mcp` under faults: each answered with a typed error, the server serving on.

On PostgreSQL a statement is held on a table lock, so the call is provably in
its statement when the fault strikes: the database session dies mid-way
(database error), the client cancels (the statement stops while the lock is
still held), one more call arrives past `--max-concurrency` (policy/server_busy).
Over raw stdio: a line that is not JSON-RPC, then a 10 MB argument, then
stdin closed (exit 0); SIGTERM (exit 0). No test asserts a duration.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp_helpers import QDSL, WAIT_S, error_of, log_events, ok_data, server_env, stdio_session
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import make_url

from qdsl.cli.main import cli

PLAN = "list project"
BLOCKED = text(
    "SELECT pid FROM pg_stat_activity WHERE datname = :db AND pid <> pg_backend_pid() "
    "AND wait_event_type = 'Lock' AND query ILIKE '%FROM projects%'"
)


def _poll(conn: Connection, db: str, *, present: bool) -> list[int]:
    """The backends blocked on the lock, once there are some (or none); generous wait."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        pids = [r[0] for r in conn.execute(BLOCKED, {"db": db})]
        if bool(pids) == present:
            return pids
        time.sleep(0.1)
    raise AssertionError(f"no {'blocked' if present else 'unblocked'} statement in {WAIT_S} s")


@pytest.fixture
def lock(pg_url: str) -> Iterator[tuple[Connection, Connection, str]]:
    """(a connection holding projects locked, a connection to watch with, the db name)."""
    engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as holder, engine.connect() as watcher:
        holder.execute(text("BEGIN"))
        holder.execute(text("LOCK TABLE projects IN ACCESS EXCLUSIVE MODE"))
        try:
            yield holder, watcher, str(make_url(pg_url).database)
        finally:
            holder.execute(text("ROLLBACK"))
    engine.dispose()


def test_cancel_busy_and_a_dying_database_on_postgres(
    pg_url: str, lock: tuple[Connection, Connection, str], tmp_path: Path
) -> None:
    holder, watcher, db = lock
    env = server_env(tmp_path / "state")
    args = ["--db", pg_url, "mcp", "--tenant", "t1", "--max-concurrency", "1"]

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log") as s:
            # 1. a call blocked in its statement; one more is refused as busy
            async with anyio.create_task_group() as tg:
                scope = anyio.CancelScope()

                async def blocked() -> None:
                    with scope:
                        await s.call_tool("run_plan", {"plan": PLAN})

                tg.start_soon(blocked)
                await anyio.to_thread.run_sync(lambda: _poll(watcher, db, present=True))
                busy = error_of(await s.call_tool("run_plan", {"plan": "count project"}))
                assert busy["code"] == "policy/server_busy" and busy["retryable"] is True
                # 2. the client cancels: the statement stops, the lock still held
                scope.cancel()
            await anyio.to_thread.run_sync(lambda: _poll(watcher, db, present=False))

            # 3. the database session dies mid-statement
            async with anyio.create_task_group() as tg:
                results: list[Any] = []

                async def dying() -> None:
                    results.append(await s.call_tool("run_plan", {"plan": PLAN}))

                tg.start_soon(dying)
                pids = await anyio.to_thread.run_sync(lambda: _poll(watcher, db, present=True))
                for pid in pids:
                    watcher.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            error = error_of(results[0])
            assert error["type"] == "database", error

            # the server goes on: the lock released, the same call answers
            await anyio.to_thread.run_sync(lambda: holder.execute(text("ROLLBACK")))
            assert ok_data(await s.call_tool("run_plan", {"plan": PLAN}))["status"] == "answered"
            holder.execute(text("BEGIN"))  # the fixture's ROLLBACK ends something

    anyio.run(body)


@pytest.mark.parametrize("option", ["--timeout-ms", "--call-timeout"])
def test_statement_and_call_timeouts_on_postgres(
    option: str, pg_url: str, lock: tuple[Connection, Connection, str], tmp_path: Path
) -> None:
    """A statement held on the lock: `--timeout-ms` has PostgreSQL cancel it
    (database/timeout), `--call-timeout` cancels the whole call
    (database/call_timeout) and its statement with it; either way the statement
    is gone while the lock is still held, and the server answers the next call."""
    holder, watcher, db = lock
    env = server_env(tmp_path / "state")  # statement timeout 600 s unless --timeout-ms
    bound, code = (
        ("300", "database/timeout") if option == "--timeout-ms" else ("1", "database/call_timeout")
    )
    args = ["--db", pg_url, "mcp", "--tenant", "t1", option, bound]

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log") as s:
            error = error_of(await s.call_tool("run_plan", {"plan": PLAN}))
            assert error["code"] == code, error
            assert error["retryable"] is True
            await anyio.to_thread.run_sync(lambda: _poll(watcher, db, present=False))
            await anyio.to_thread.run_sync(lambda: holder.execute(text("ROLLBACK")))
            assert ok_data(await s.call_tool("run_plan", {"plan": PLAN}))["status"] == "answered"
            holder.execute(text("BEGIN"))  # the fixture's ROLLBACK ends something

    anyio.run(body)


class RawServer:
    """`qdsl mcp --tenant t1` on pipes: what a host writes, byte for byte."""

    def __init__(self, state: Path, log: Path) -> None:
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [QDSL, "mcp", "--tenant", "t1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=server_env(state),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()
        )
        return self.receive()

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=WAIT_S))
        return message

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(WAIT_S)
        self.log.close()


def test_raw_stdio_malformed_lines_a_10mb_argument_and_stdin_closed(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "state", tmp_path / "server.log")
    try:
        server.send(b"this is not json")
        not_json = server.receive()
        assert not_json["id"] is None and not_json["error"]["code"] == -32700
        server.send(b'{"jsonrpc": "2.0", "id": 4, "method": 7}')
        not_rpc = server.receive()
        assert not_rpc["id"] is None and not_rpc["error"]["code"] == -32600

        init = server.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert init["result"]["serverInfo"]["name"] == "qdsl"
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        listed = server.request(2, "tools/list", {})
        assert len(listed["result"]["tools"]) == 6

        big = server.request(
            3, "tools/call", {"name": "ask", "arguments": {"question": "x" * (10 * 1024 * 1024)}}
        )
        assert big["result"]["isError"] is True
        assert big["result"]["structuredContent"]["error"]["code"] == "usage/input_bytes_exceeded"
        unknown = server.request(4, "tools/call", {"name": "drop_tables", "arguments": {}})
        assert unknown["error"]["code"] == -32602

        asked = server.request(
            5, "tools/call", {"name": "ask", "arguments": {"question": "how many projects"}}
        )
        assert asked["result"]["structuredContent"]["data"]["status"] == "answered"

        # the host closes stdin: the server stops cleanly
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(WAIT_S) == 0
        assert server.lines.empty()  # stdout held nothing but the answers above
    finally:
        server.close()


def test_stdout_is_the_protocol_and_the_log_json_lines_on_stderr(tmp_path: Path) -> None:
    """Every stdout line is a JSON-RPC response to a request sent; every stderr
    line is one structlog JSON object, a `tool_call` per call among them."""
    log = tmp_path / "server.log"
    server = RawServer(tmp_path / "state", log)
    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        responses = [server.request(1, "initialize", init)]
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        server.send(b"not json")
        responses.append(server.receive())
        for i, question in enumerate(("how many projects", "list all projects"), start=2):
            args = {"name": "ask", "arguments": {"question": question}}
            responses.append(server.request(i, "tools/call", args))
        bad = {"name": "run_plan", "arguments": {"plan": "list nothing_such"}}
        responses.append(server.request(4, "tools/call", bad))
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(WAIT_S) == 0
    finally:
        server.close()
    assert server.lines.empty()
    assert [r["jsonrpc"] for r in responses] == ["2.0"] * 5
    assert [r["id"] for r in responses] == [1, None, 2, 3, 4]

    events = log_events(log)
    assert log.read_text().endswith("\n")  # nothing but whole lines
    for event in events:
        assert {"timestamp", "level", "logger", "event"} <= event.keys(), event
    calls = [e for e in events if e["event"] == "tool_call"]
    assert [(c["tool"], c["tenant"], c["outcome"]) for c in calls] == [
        ("ask", "t1", "ok"),
        ("ask", "t1", "ok"),
        ("run_plan", "t1", responses[-1]["result"]["structuredContent"]["error"]["code"]),
    ]
    assert all(isinstance(c["ms"], float) for c in calls)
    names = [e["event"] for e in events]
    assert names[0] == "serving" and names[-1] == "stopping"
    assert "malformed_message" in names


def test_sigterm_stops_the_stdio_server_cleanly(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "state", tmp_path / "server.log")
    try:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        assert "result" in server.request(1, "initialize", params)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(WAIT_S) == 0
    finally:
        server.close()
    events = log_events(tmp_path / "server.log")
    assert {"event": "stopping", "signal": "SIGTERM"}.items() <= events[-1].items()


def test_start_up_errors_are_the_cli_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(cli, ["--json", "mcp", *args])
        assert result.exit_code == 2, result.output
        error: dict[str, Any] = json.loads(result.stderr)["error"]
        return error

    assert run("--tenant", " ")["code"] == "usage/missing_tenant"
    assert run("--tenant", "t\x07")["code"] == "usage/bad_tenant"
    assert run()["code"] == "usage/bad_arguments"
    assert run("--tenant", "t1", "--http", "127.0.0.1:0")["code"] == "usage/bad_arguments"
    assert run("--http", "localhost")["code"] == "usage/bad_address"
    monkeypatch.setitem(__import__("sys").modules, "mcp", None)  # the SDK not installed
    missing = run("--tenant", "t1")
    assert missing["code"] == "usage/mcp_not_installed"
    assert "pip install 'qdsl-verified[mcp]'" in missing["hint"]
