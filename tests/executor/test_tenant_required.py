"""No tenant, no query (issue 13, finding 2).

`prepare()` used to bind the plan's own `scope.tenant_id` when the caller gave
none, so a plan naming another tenant ran as that tenant; a blank `--tenant ""`
was accepted. Every entry now refuses a missing, blank or malformed tenant as
a usage error, and the executor never reads the tenant from the plan.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from click.testing import CliRunner
from exec_support import CATALOG, NOW
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine

from qdsl import aplan_and_answer, plan_and_answer
from qdsl.cli.main import cli
from qdsl.dsl.errors import UsageError
from qdsl.dsl.ir import Plan, QueryType, Scope
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor.compile import prepare
from qdsl.executor.run import aexecute, execute
from qdsl.facts.db import make_async_engine

BAD_TENANTS: list[Any] = [
    None,
    "",
    " ",
    "\t",
    " t1",
    "t1 ",
    "t1\n",
    "t\x00",
    "t\x1b[31m",
    "t\u200b1",  # zero-width space: prints like "t1"
    "t\u202e1",  # right-to-left override
    "t\ud800",  # lone surrogate
    "t\u2028",
    "t\u00a01",  # no-break space: prints like "t 1"
    "x" * 129,
    7,
    b"t1",
]
PLAN_OF_T2 = Plan(query_type=QueryType.LIST, entity_type="project", scope=Scope(tenant_id="t2"))


@pytest.mark.parametrize("tenant", BAD_TENANTS, ids=repr)
def test_valid_tenant_refuses(tenant: Any) -> None:
    with pytest.raises(UsageError) as info:
        valid_tenant(tenant)
    assert info.value.subtype in ("missing_tenant", "bad_tenant")
    assert info.value.exit_code == 2


@given(st.text(min_size=1, max_size=40))
def test_valid_tenant_accepts_only_what_prints_as_itself(tenant: str) -> None:
    wanted = tenant == tenant.strip() != "" and tenant.isprintable()
    try:
        assert valid_tenant(tenant) == tenant
    except UsageError:
        assert not wanted
        return
    assert wanted


def test_printable_unicode_tenants_are_accepted() -> None:
    for tenant in ("t1", "租户-甲", "tenant.with.dots", "a b", "x" * 128):
        assert valid_tenant(tenant) == tenant


@pytest.mark.parametrize("tenant", BAD_TENANTS, ids=repr)
def test_executor_refuses_a_bad_tenant_and_never_takes_the_plans(
    tenant: Any, sqlite_engine: Engine
) -> None:
    if tenant is not None:  # prepare takes None where nothing runs (`qdsl compile`)
        with pytest.raises(UsageError):
            prepare(PLAN_OF_T2, CATALOG, "sqlite", tenant)
    with pytest.raises(UsageError):
        execute(PLAN_OF_T2, CATALOG, sqlite_engine, tenant, now=NOW)


def test_prepare_without_a_tenant_never_binds_the_plans() -> None:
    assert prepare(PLAN_OF_T2, CATALOG, "sqlite", None).params["tenant_id"] is None


def test_a_plan_scoped_to_t2_without_a_caller_tenant_reads_nothing(sqlite_url: str) -> None:
    async def go() -> None:
        engine = make_async_engine(sqlite_url)
        try:
            with pytest.raises(UsageError):
                await aexecute(PLAN_OF_T2, CATALOG, engine, None, now=NOW)  # type: ignore[arg-type]
        finally:
            await engine.dispose()

    asyncio.run(go())


@pytest.mark.parametrize("tenant", [None, "", "  ", "t\x00", "x" * 129])
def test_api_refuses_a_bad_tenant(tenant: Any, sqlite_engine: Engine, sqlite_url: str) -> None:
    with pytest.raises(UsageError):
        plan_and_answer("how many projects?", tenant, engine=sqlite_engine)

    async def go() -> None:
        engine = make_async_engine(sqlite_url)
        try:
            await aplan_and_answer("how many projects?", tenant, engine=engine)
        finally:
            await engine.dispose()

    with pytest.raises(UsageError):
        asyncio.run(go())


def _cli(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["--json", *args])
    return result.exit_code, json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("tenant", ["", " ", "t1\n", "t\x07", "x" * 200])
def test_cli_refuses_a_blank_or_malformed_tenant_everywhere(tenant: str, sqlite_url: str) -> None:
    commands = [
        ["--db", sqlite_url, "run", "--tenant", tenant, "--plan", "count project"],
        ["--db", sqlite_url, "ask", "--tenant", tenant, "how many projects?"],
        ["parse", "--tenant", tenant, "--plan", "count project"],
        ["compile", "--tenant", tenant, "--plan", "count project"],
        [
            "chain",
            "--steps",
            json.dumps([{"op": "parse", "input": {"tenant": tenant, "plan": "count project"}}]),
        ],
    ]
    for args in commands:
        code, envelope = _cli(args)
        assert code == 2, (args, envelope)
        assert envelope["error"]["type"] == "usage"
        assert envelope["error"]["subtype"] in ("missing_tenant", "bad_tenant"), envelope


def test_compile_without_a_tenant_leaves_it_unbound_not_the_plans() -> None:
    scoped = {"query_type": "count", "entity_type": "project", "scope": {"tenant_id": "t2"}}
    plan = json.dumps(scoped)
    result = CliRunner().invoke(cli, ["--json", "compile", "--plan", plan])
    assert result.exit_code == 0, result.stderr
    params = json.loads(result.stdout)["data"]["statements"][0]["params"]
    assert params["tenant_id"] is None
