"""`qdsl mcp --tenant T` over stdio, driven by the SDK's client (docs/mcp.md).

initialize -> tools/list -> tools/call for every tool, on SQLite and
PostgreSQL. Each tool's data is compared with the same operation in-process
(`plan_and_answer`, `compile_plan`, `describe_catalog`, `plan_json_schema`),
so the server adds transport and nothing else; a plan naming another tenant
gets the CLI's very policy error.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal
from cases.question_gen import load_rows, questions
from hypothesis import given, settings
from isolation import check_isolation, plans
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_helpers import (
    cli_json,
    error_of,
    ok_data,
    server_env,
    stdio_session,
    structured,
    without_trace,
)
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.catalog_view import describe_catalog
from qdsl.dsl.catalog import resolve_catalog
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.schema import plan_json_schema
from qdsl.envelope.records import RefRecord, new_ref_id
from qdsl.envelope.store import open_store
from qdsl.executor.compile import compile_plan
from qdsl.facts.db import make_engine
from qdsl.facts.demo import DEMO_NOW
from qdsl.mcp.resources import PAGE_SIZE

TOOLS = {"ask", "run_plan", "compile_plan", "describe_catalog", "plan_schema", "get_ref"}
QUESTION = "list all projects"
PLAN_TEXT = 'list project where status in ("active", "paused") limit 5'


def test_every_tool_over_stdio(db_url: str, engine: Engine, tmp_path: Path) -> None:
    env = server_env(tmp_path / "state")

    async def body() -> None:
        args = ["--db", db_url, "mcp", "--tenant", "t1"]
        async with stdio_session(args, env, tmp_path / "server.log") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
                assert tool.output_schema is not None and tool.output_schema["type"] == "object"
                assert tool.input_schema["type"] == "object"
                assert tool.input_schema.get("additionalProperties") is False
                assert "tenant" not in json.dumps(sorted(tool.input_schema.get("properties", {})))
            # run_plan takes the plan as text or as `qdsl schema`'s JSON plan
            plan_def = tools["run_plan"].input_schema["$defs"]["Plan"]
            expected_plan = {k: v for k, v in plan_json_schema().items() if k != "$schema"}
            assert {**plan_def, "$defs": tools["run_plan"].input_schema["$defs"]} == {
                **expected_plan,
                "$defs": {**expected_plan["$defs"], **tools["run_plan"].input_schema["$defs"]},
            }

            asked = await s.call_tool("ask", {"question": QUESTION})
            expected = plan_and_answer(
                QUESTION, "t1", engine=engine, options=AnswerOptions(now=DEMO_NOW)
            ).to_dict()
            assert without_trace(ok_data(asked)) == without_trace(expected)
            assert "[answered]" in asked.content[0].text  # the short text block

            # meta.next became a ready tool call: the status of the first project listed
            hint = structured(asked)["meta"]["next"][0]
            assert hint["tool"] == "run_plan"
            ran = ok_data(await s.call_tool(hint["tool"], hint["arguments"]))
            assert ran["status"] == "answered"
            first = expected["answer"]["items"][0]["id"]
            assert [r["entity_id"] for r in ran["result"]["rows"]] == [first]

            compiled = ok_data(
                await s.call_tool("compile_plan", {"plan": PLAN_TEXT, "dialect": "sqlite"})
            )
            catalog = resolve_catalog(None)
            plan = normalize(load_plan(PLAN_TEXT), catalog, PlanContext(tenant_id="t1")).plan
            assert compiled == compile_plan(plan, catalog, "sqlite", tenant_id="t1").to_dict()

            described = ok_data(await s.call_tool("describe_catalog", {}))
            assert described == json.loads(json.dumps(describe_catalog(catalog)))
            one = ok_data(await s.call_tool("describe_catalog", {"entity": "project"}))
            assert list(one["entities"]) == ["project"]

            assert ok_data(await s.call_tool("plan_schema", {})) == plan_json_schema()

            never_made = new_ref_id("run", int(time.time() * 1000))
            missing = error_of(await s.call_tool("get_ref", {"ref_id": never_made}))
            assert missing["code"] == "ref/ref_not_found"

    anyio.run(body)


def test_foreign_tenant_plan_is_the_cli_policy_error(tmp_path: Path) -> None:
    """A plan naming another tenant: refused with the CLI's error, type to hint."""
    state = tmp_path / "state"
    plan = {"query_type": "list", "entity_type": "project", "scope": {"tenant_id": "t2"}}
    plan_json = json.dumps(plan)
    cli = cli_json(["run", "--tenant", "t1", "--plan", plan_json], state, ok=False)

    async def body() -> None:
        async with stdio_session(
            ["mcp", "--tenant", "t1"], server_env(state), tmp_path / "log"
        ) as s:
            for tool, args in (
                ("run_plan", {"plan": plan}),
                ("run_plan", {"plan": plan_json}),
                ("run_plan", {"plan": 'list project tenant "t2"'}),
                ("compile_plan", {"plan": plan}),
            ):
                error = error_of(await s.call_tool(tool, args))
                assert error["code"] == "policy/tenant_scope_mismatch"
                assert {k: error[k] for k in ("type", "subtype", "hint", "retryable")} == {
                    k: cli[k] for k in ("type", "subtype", "hint", "retryable")
                }
            # a tenant smuggled in as an argument is refused before anything runs
            error = error_of(await s.call_tool("ask", {"question": QUESTION, "tenant": "t2"}))
            assert error["code"] == "usage/bad_arguments"

    anyio.run(body)


def test_a_ref_made_by_one_server_is_read_by_the_next(pg_url: str, tmp_path: Path) -> None:
    """Several server processes, one PostgreSQL ref store (QDSL_REF_STORE): a ref
    one made is a resource of the next, for the same tenant only."""

    def env(name: str) -> dict[str, str]:
        return server_env(tmp_path / name, QDSL_REF_STORE="postgresql", QDSL_REF_THRESHOLD="1024")

    def args(tenant: str) -> list[str]:
        return ["--db", pg_url, "mcp", "--tenant", tenant]

    async def body() -> None:
        async with stdio_session(args("t1"), env("a"), tmp_path / "a.log") as first:
            made = structured(await first.call_tool("ask", {"question": QUESTION}))
        ref_id, uri = made["refId"], f"qdsl://refs/{made['refId']}"
        async with stdio_session(args("t1"), env("b"), tmp_path / "b.log") as second:
            assert uri in [str(r.uri) for r in (await second.list_resources()).resources]
            read = await second.read_resource(uri)
            text = read.contents[0].text  # type: ignore[union-attr]
            assert hashlib.sha256(text.encode()).hexdigest() == made["sha256"]
            got = ok_data(
                await second.call_tool("get_ref", {"ref_id": ref_id, "expr": "data.text"})
            )
            assert got["value"] == json.loads(text)["data"]["text"]
        async with stdio_session(args("t2"), env("c"), tmp_path / "c.log") as other:
            assert uri not in [str(r.uri) for r in (await other.list_resources()).resources]
            error = error_of(await other.call_tool("get_ref", {"ref_id": ref_id}))
            assert error["code"] == "ref/ref_not_found"
        assert not (tmp_path / "a" / "refs").exists()  # the ref went to the database

    anyio.run(body)


def test_resources_list_pages_through_this_tenants_refs_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More refs than a page: every page of `resources/list` holds the caller's own
    refs only, newest first, and the cursor walks them all once, even when a ref
    is made between pages."""
    state = tmp_path / "state"
    monkeypatch.setenv("QDSL_STATE_DIR", str(state))
    monkeypatch.setenv("QDSL_REF_MAX_COUNT", "200")
    store = open_store()
    made: dict[str | None, list[RefRecord]] = {"t1": [], "t2": [], None: []}
    for tenant, count in (("t1", PAGE_SIZE + 7), ("t2", 5), (None, 3)):
        for i in range(count):
            payload = json.dumps({"ok": True, "data": {"i": i, "tenant": tenant}}).encode()
            made[tenant].append(store.put("run", payload, tenant=tenant))
    env = server_env(state, QDSL_REF_MAX_COUNT="200")

    def newest_first(records: list[RefRecord]) -> list[str]:
        ordered = sorted(records, key=lambda r: (r.created_ms, r.ref_id), reverse=True)
        return [f"qdsl://refs/{r.ref_id}" for r in ordered]

    async def pages(s: ClientSession) -> list[list[str]]:
        out: list[list[str]] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await s.list_resources(params=params)
            out.append([str(r.uri) for r in page.resources])
            if len(out) == 1:  # a ref made between pages: newer than every cursor
                store.put("run", b'{"ok": true}', tenant="t1")
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    async def body() -> None:
        async with stdio_session(["mcp", "--tenant", "t1"], env, tmp_path / "t1.log") as s:
            listed = await pages(s)
            assert [len(p) for p in listed] == [PAGE_SIZE, 7]
            assert [u for p in listed for u in p] == newest_first(made["t1"])
            with pytest.raises(MCPError) as caught:
                await s.list_resources(params=types.PaginatedRequestParams(cursor="nonsense"))
            assert caught.value.error.code == types.INVALID_PARAMS
            assert caught.value.data["code"] == "usage/bad_cursor"
            first = await s.list_resources()  # and it goes on serving
            assert len(first.resources) == PAGE_SIZE
        async with stdio_session(["mcp", "--tenant", "t2"], env, tmp_path / "t2.log") as s:
            assert [u for p in await pages(s) for u in p] == newest_first(made["t2"])

    anyio.run(body)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def served_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"))


def test_two_tenants_servers_never_see_each_other(
    served_url: str, portal: BlockingPortal, tmp_path: Path
) -> None:
    """Over stdio each server's tenant is fixed at start: two servers of two
    tenants, sharing one ref store, answer each its own tenant's rows only and
    never show one another's refs (Hypothesis over questions and plans)."""
    catalog = resolve_catalog(None)
    engine = make_engine(served_url)
    rows = load_rows(engine, catalog, "t1")
    entities = sorted(n for n, e in catalog.entities.items() if "list" in e.query_types)
    env = server_env(tmp_path / "state", QDSL_REF_THRESHOLD="2048")  # refs made often

    def served(tenant: str) -> Any:
        args = ["--db", served_url, "mcp", "--tenant", tenant]
        return portal.wrap_async_context_manager(
            stdio_session(args, env, tmp_path / f"{tenant}.log")
        )

    with served("t1") as s1, served("t2") as s2:
        sessions = {"t1": s1, "t2": s2}

        @settings(max_examples=8, deadline=None)
        @given(question=questions(catalog, rows, DEMO_NOW), plan=plans(entities))
        def check(question: Any, plan: dict[str, Any]) -> None:
            check_isolation(portal, sessions, engine, catalog, question=question.text, plan=plan)

        check()
    engine.dispose()
