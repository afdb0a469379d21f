"""`--timeout-ms`, `--call-timeout` and cancellation over MCP, through the SDK's client.

On SQLite the server runs as `slow_lower` (qdsl with the executor's lower()
slowed down and counted, one call per row a text filter reads): a text filter
over tenant t3's 300 projects then takes about 15 s, and the count says how
far its statement got. A statement stopped mid-way leaves fewer calls than
rows, and a call is answered only once its statement has ended, so the count
read after the answer is final. Each fault is a typed error and the server
answers the next call. No test asserts a duration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp_helpers import WAIT_S, error_of, ok_data, server_env, stdio_session

SLOW_PLAN = 'list project where title contains "a"'
ROWS = 300  # tenant t3's projects: lower() is called once for each
FAST_PLAN = "count project"


def _env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    counter = tmp_path / "lower-calls"
    counter.touch()
    env = server_env(
        tmp_path / "state", QDSL_TEST_LOWER_COUNTER=str(counter), QDSL_TEST_LOWER_PAUSE_S="0.05"
    )
    return env, counter


def _calls(counter: Path) -> int:
    return counter.stat().st_size


async def _answers_again(s: ClientSession) -> dict[str, Any]:
    """The next call's answer, once the server is free (a stopping call holds its slot)."""
    with anyio.fail_after(WAIT_S):
        while True:
            result = await s.call_tool("run_plan", {"plan": FAST_PLAN})
            if not result.is_error or error_of(result)["code"] != "policy/server_busy":
                data: dict[str, Any] = ok_data(result)
                return data
            await anyio.sleep(0.05)


def test_statement_timeout_ms_stops_a_sqlite_statement(sqlite_url: str, tmp_path: Path) -> None:
    env, counter = _env(tmp_path)
    args = ["--db", sqlite_url, "mcp", "--tenant", "t3", "--timeout-ms", "300"]

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log", module="slow_lower") as s:
            error = error_of(await s.call_tool("run_plan", {"plan": SLOW_PLAN}))
            assert error["code"] == "database/timeout", error
            assert error["retryable"] is True and error["details"]["timeout_ms"] == 300
            stopped_at = _calls(counter)
            assert 0 < stopped_at < ROWS
            assert (await _answers_again(s))["status"] == "answered"
            assert _calls(counter) == stopped_at  # a count reads no title

    anyio.run(body)


def test_call_timeout_interrupts_a_sqlite_statement(sqlite_url: str, tmp_path: Path) -> None:
    env, counter = _env(tmp_path)  # statement timeout 600 s: only the call's bound applies
    args = ["--db", sqlite_url, "mcp", "--tenant", "t3", "--call-timeout", "1"]

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log", module="slow_lower") as s:
            error = error_of(await s.call_tool("run_plan", {"plan": SLOW_PLAN}))
            assert error["code"] == "database/call_timeout", error
            assert error["retryable"] is True and error["details"]["call_timeout_s"] == 1
            stopped_at = _calls(counter)
            assert 0 < stopped_at < ROWS
            assert (await _answers_again(s))["status"] == "answered"
            assert _calls(counter) == stopped_at

    anyio.run(body)


def test_a_cancelled_call_interrupts_its_sqlite_statement(sqlite_url: str, tmp_path: Path) -> None:
    env, counter = _env(tmp_path)
    args = ["--db", sqlite_url, "mcp", "--tenant", "t3", "--max-concurrency", "1"]

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log", module="slow_lower") as s:
            scope = anyio.CancelScope()

            async def slow() -> None:
                with scope:
                    await s.call_tool("run_plan", {"plan": SLOW_PLAN})

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                with anyio.fail_after(WAIT_S):
                    while _calls(counter) == 0:  # the statement is reading rows
                        await anyio.sleep(0.02)
                scope.cancel()  # the client sends notifications/cancelled
            # the slot is free once the statement has ended: the next call answers
            assert (await _answers_again(s))["status"] == "answered"
            stopped_at = _calls(counter)
            assert 0 < stopped_at < ROWS

    anyio.run(body)
