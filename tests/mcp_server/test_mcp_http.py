"""`qdsl mcp --http` driven by the SDK's streamable HTTP client (docs/mcp.md).

Tokens map to tenants: no token, an unknown or a revoked one is 401 and
nothing runs; two tokens of two tenants never see each other's rows or refs
(Hypothesis over generated questions and plans, each answer compared with
`plan_and_answer` / `qdsl run` for the token's own tenant). A large list
comes back as a preview led by `refId` that `resources/read` and `get_ref`
read back with the announced sha256. Faults: 50 concurrent calls, a
malformed message, a 10 MB argument, each answered with a typed error while
the server keeps serving; SIGTERM stops it cleanly (exit 0).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from anyio.from_thread import BlockingPortal
from cases.question_gen import load_rows, questions
from hypothesis import given, settings
from isolation import check_isolation, plans
from mcp.shared.exceptions import MCPError
from mcp_helpers import (
    HttpServer,
    cli_json,
    error_of,
    http_session,
    ok_data,
    server_env,
    structured,
)

from qdsl.dsl.catalog import resolve_catalog
from qdsl.dsl.plan.schema import plan_json_schema
from qdsl.facts.db import make_engine
from qdsl.facts.demo import DEMO_NOW

# Small enough that a list of a few items goes over it: refs are made often.
THRESHOLD = "2048"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HttpServer, str]]:
    """A server on one database, shared by the module's tests: (server, its database URL)."""
    url = str(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"))
    state = tmp_path_factory.mktemp("mcp-http") / "state"
    env = server_env(state, QDSL_REF_THRESHOLD=THRESHOLD)
    server = HttpServer.start(["--db", url], env, state, ("--max-concurrency", "4"))
    yield server, url
    assert server.stop() == 0, server.log.read_text()


def run(fn: Callable[[], Any]) -> Any:
    return anyio.run(fn)


def test_every_tool_and_a_large_result_over_http(served: tuple[HttpServer, str]) -> None:
    server, _url = served
    token, _id = server.token("t1")

    async def body() -> None:
        async with http_session(server.url, token) as s:
            tools = (await s.list_tools()).tools
            assert len(tools) == 6 and all(t.annotations.read_only_hint for t in tools)  # type: ignore[union-attr]
            # over the 2 KB budget here: stored, and read back by JMESPath
            for tool, expr, expected in (
                ("plan_schema", "data.title", plan_json_schema()["title"]),
                ("describe_catalog", "contains(keys(data.entities), 'project')", True),
            ):
                env = structured(await s.call_tool(tool, {}))
                picked = {"ref_id": env["refId"], "expr": expr}
                assert ok_data(await s.call_tool("get_ref", picked))["value"] == expected
            compiled = ok_data(await s.call_tool("compile_plan", {"plan": "count project"}))
            assert compiled["template"] == "project.count"

            # a large list: a preview led by refId, the full envelope a resource
            asked = await s.call_tool("ask", {"question": "list all projects"})
            env = structured(asked)
            assert next(iter(env)) == "refId" and env["resultPersisted"] is True
            preview = env["data"]
            assert isinstance(preview["answer"]["items"], list)  # a list stays a list
            links = [c for c in asked.content if c.type == "resource_link"]
            assert [str(link.uri) for link in links] == [f"qdsl://refs/{env['refId']}"]

            listed = (await s.list_resources()).resources
            assert f"qdsl://refs/{env['refId']}" in [str(r.uri) for r in listed]
            read = await s.read_resource(f"qdsl://refs/{env['refId']}")
            text = read.contents[0].text  # type: ignore[union-attr]
            assert hashlib.sha256(text.encode()).hexdigest() == env["sha256"]
            assert len(text.encode()) == env["outputBytes"]
            stored = json.loads(text)
            assert stored["data"]["text"] == preview["text"]  # the rendered answer, whole

            got = ok_data(
                await s.call_tool(
                    "get_ref", {"ref_id": env["refId"], "expr": "data.answer.items[*].id"}
                )
            )
            assert got["sha256"] == env["sha256"]
            assert got["value"] == [i["id"] for i in stored["data"]["answer"]["items"]]
            assert len(got["value"]) > len(preview["answer"]["items"])
            # the hint to read the first item is a ready get_ref call
            hints = env["meta"]["next"]
            first = next(h for h in hints if h["tool"] == "get_ref")
            item = ok_data(await s.call_tool("get_ref", first["arguments"]))["value"]
            assert item == stored["data"]["answer"]["items"][0]

    run(body)


def test_no_unknown_or_revoked_token_is_401(served: tuple[HttpServer, str]) -> None:
    server, _url = served
    token, token_id = server.token("t1")

    def status(headers: dict[str, str]) -> int:
        with httpx2.Client(timeout=60) as client:
            return client.post(server.url, json=INIT, headers={**ACCEPT, **headers}).status_code

    assert status({}) == 401
    assert status({"Authorization": "Bearer qdsl_" + "x" * 43}) == 401
    assert status({"Authorization": "Basic dDE6dDE="}) == 401
    assert status({"Authorization": f"Bearer {token}"}) == 200

    async def refused() -> None:
        async with http_session(server.url, None) as s:
            await s.list_tools()

    # the SDK's client cannot even initialize without one
    with pytest.raises(ExceptionGroup) as caught:
        run(refused)
    assert caught.group_contains(MCPError, depth=None)

    cli_json(["mcp", "token", "revoke", token_id], server.state_dir)
    assert status({"Authorization": f"Bearer {token}"}) == 401
    listed = cli_json(["mcp", "token", "list"], server.state_dir)["tokens"]
    assert {"id": token_id, "active": False}.items() <= next(
        t for t in listed if t["id"] == token_id
    ).items()
    assert all("token" not in t and "sha256" not in t for t in listed)


def test_two_tenants_never_see_each_other(
    served: tuple[HttpServer, str], portal: BlockingPortal
) -> None:
    server, url = served
    catalog = resolve_catalog(None)
    engine = make_engine(url)
    rows = load_rows(engine, catalog, "t1")
    entities = sorted(n for n, e in catalog.entities.items() if "list" in e.query_types)
    tokens = {t: server.token(t)[0] for t in ("t1", "t2")}
    with (
        portal.wrap_async_context_manager(http_session(server.url, tokens["t1"])) as s1,
        portal.wrap_async_context_manager(http_session(server.url, tokens["t2"])) as s2,
    ):
        sessions = {"t1": s1, "t2": s2}

        @settings(max_examples=8, deadline=None)
        @given(question=questions(catalog, rows, DEMO_NOW), plan=plans(entities))
        def check(question: Any, plan: dict[str, Any]) -> None:
            check_isolation(portal, sessions, engine, catalog, question=question.text, plan=plan)

        check()
    engine.dispose()


def test_faults_are_typed_errors_and_the_server_keeps_serving(
    served: tuple[HttpServer, str],
) -> None:
    server, _url = served
    token, _id = server.token("t1")

    async def body() -> None:
        async with http_session(server.url, token) as s:
            # 50 concurrent calls: each answered, or refused as busy (max 4 at once)
            outcomes: list[str] = []

            async def one(i: int) -> None:
                result = await s.call_tool("ask", {"question": f"how many projects ({i})"})
                env = structured(result)
                outcomes.append("ok" if env["ok"] else env["error"]["code"])

            async with anyio.create_task_group() as tg:
                for i in range(50):
                    tg.start_soon(one, i)
            assert len(outcomes) == 50
            assert set(outcomes) <= {"ok", "policy/server_busy"}, outcomes
            assert "ok" in outcomes

            # a 10 MB argument: refused by the input limit, typed
            big = error_of(await s.call_tool("ask", {"question": "x" * (10 * 1024 * 1024)}))
            assert big["code"] == "usage/input_bytes_exceeded"
            big_plan = error_of(await s.call_tool("run_plan", {"plan": "y" * (10 * 1024 * 1024)}))
            assert big_plan["code"] == "usage/plan_bytes_exceeded"
            assert ok_data(await s.call_tool("ask", {"question": "how many projects"}))

    run(body)

    # a malformed message: HTTP 400 with a JSON-RPC parse error, then business as usual
    with httpx2.Client(timeout=60) as client:
        auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
        bad = client.post(server.url, content=b'{"jsonrpc": "2.0", "id": 1, "meth', headers=auth)
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == -32700
        assert client.post(server.url, json=INIT, headers=auth).status_code == 200
