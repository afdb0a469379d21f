"""The MCP server survives any single request (issue 25, F3 / F7, build item 3).

Each bomb goes to a running server under a 3 GB address-space cap (`capped`):
`get_ref` with an exponential JMESPath (`@|[@,@]` x 19 killed the HTTP server
for every tenant; x 16 wrote a 219 MB ref), with nesting thousands deep
(an internal error), with a separator that multiplies a join, with a
`map` of multi-selects. Each is refused with its typed usage error, and then
a normal call from another tenant (over HTTP, another token on the same
server) or the next call (over stdio, one tenant per server) is answered.
No ref over the store's byte cap is ever written.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import ClientSession
from mcp_helpers import (
    HttpServer,
    error_of,
    http_session,
    ok_data,
    server_env,
    stdio_session,
    structured,
)

from qdsl.envelope.settings import DEFAULT_MAX_BYTES

BOMBS = {
    "doubling x16": "@" + "|[@,@]" * 16,
    "doubling x19": "@" + "|[@,@]" * 19,
    "doubling x60": "@" + "|[@,@]" * 60,
    "3,000 deep": "[" * 3000 + "@" + "]" * 3000,
    "1,500 deep": "[" * 1500 + "@" + "]" * 1500,
    "3,000 nots": "!" * 3000 + "@",
    "2,000 pipes": "@" + "|@" * 2000,
    "a deep literal": "`" + "[" * 2000 + "]" * 2000 + "`",
    "to_string of a doubling": "to_string(@" + "|[@,@]" * 30 + ")",
    "a multiplied join": "join('"
    + "x" * 4000
    + "', map(&'', @"
    + "|[@,@]" * 11
    + "|[]" * 10
    + "))",
    "maps of multi-selects": "map(&[@,@,@,@,@,@,@,@], " * 12 + "to_array(@)" + ")" * 12,
    "a long path": "data." + "a" * 10_000,
}
BOUNDS = {
    "usage/jmespath_result_bytes_exceeded",
    "usage/jmespath_depth_exceeded",
    "usage/jmespath_chars_exceeded",
    "usage/jmespath_ms_exceeded",
}
ENV = {"QDSL_REF_THRESHOLD": "1024", "QDSL_TEST_MEMORY_CAP_MB": "3072"}


async def _bombard(
    attacker: ClientSession, bystander: ClientSession, log: list[tuple[str, str]]
) -> None:
    made = await attacker.call_tool("plan_schema", {})
    assert made.structured_content is not None
    ref_id = made.structured_content["refId"]
    for name, expr in BOMBS.items():
        refused = error_of(await attacker.call_tool("get_ref", {"ref_id": ref_id, "expr": expr}))
        log.append((name, refused["code"]))
        # the server is still there, for everyone
        counted = structured(await bystander.call_tool("ask", {"question": "how many projects"}))
        assert counted["ok"] is True and counted["operation"] == "ask", (name, counted)
        await attacker.send_ping()
    read = ok_data(await attacker.call_tool("get_ref", {"ref_id": ref_id, "expr": "data.title"}))
    assert read["value"]


def _check(log: list[tuple[str, str]], state: Path) -> None:
    assert [name for name, _code in log] == list(BOMBS)
    assert {code for _name, code in log} <= BOUNDS, log
    refs = [p for p in (state / "refs").glob("*/*.json")]
    assert refs and all(p.stat().st_size <= DEFAULT_MAX_BYTES for p in refs)


def test_bombs_over_http_then_another_tenant_is_answered(sqlite_url: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    server = HttpServer.start(
        ["--db", sqlite_url], server_env(state, **ENV), state, module="capped"
    )
    log: list[tuple[str, str]] = []
    try:
        t1, _ = server.token("t1")
        t2, _ = server.token("t2")

        async def body() -> None:
            async with (
                http_session(server.url, t1) as attacker,
                http_session(server.url, t2) as bystander,
            ):
                await _bombard(attacker, bystander, log)

        anyio.run(body)
    finally:
        code = server.stop()
    assert code == 0, server.log.read_text()[-2000:]
    _check(log, state)


def test_bombs_over_stdio_then_the_next_call_is_answered(sqlite_url: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = server_env(state, **ENV)
    log: list[tuple[str, str]] = []

    async def body() -> None:
        args = ["--db", sqlite_url, "mcp", "--tenant", "t1"]
        async with stdio_session(args, env, tmp_path / "server.log", module="capped") as s:
            await _bombard(s, s, log)

    anyio.run(body)
    _check(log, state)
