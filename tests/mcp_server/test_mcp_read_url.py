"""The MCP server's read URL (`qdsl --db PRIMARY --read-db STANDBYS mcp`): plans
of `ask` and `run_plan` read the read URL, a plan requiring fresh facts the
primary, on SQLite (the server's sync path) and PostgreSQL (its asyncio one).

The "standby" is a second database holding the same demo but that its active
projects of t1 are closed, so a count of them tells where a plan ran.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp_helpers import ok_data, server_env, stdio_session

PLAN = 'count project where status = "active"'
FRESH_PLAN = f"{PLAN} retrieval facts_first, require_fresh_fact"


def test_plans_read_the_read_url(two_databases: tuple[str, str], tmp_path: Path) -> None:
    primary, reader = two_databases
    args = ["--db", primary, "--read-db", reader, "mcp", "--tenant", "t1"]
    env = server_env(tmp_path / "state")

    async def body() -> None:
        async with stdio_session(args, env, tmp_path / "server.log") as s:
            ran = ok_data(await s.call_tool("run_plan", {"plan": PLAN}))
            fresh = ok_data(await s.call_tool("run_plan", {"plan": FRESH_PLAN}))
            asked = ok_data(await s.call_tool("ask", {"question": "有多少个活跃项目"}))
        assert ran["status"] == "answered" and ran["answer"]["count"] == 0, ran
        assert fresh["status"] == "answered" and fresh["answer"]["count"] > 0, fresh
        assert asked["status"] == "answered" and asked["answer"]["count"] == 0, asked

    anyio.run(body)
