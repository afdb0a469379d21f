"""Two tenants' sessions of `qdsl mcp`, never seeing each other's rows or refs.

Shared by the stdio test (one server per tenant) and the HTTP test (one
server, a token per tenant): for a generated question and plan, each tenant's
`ask` and `run_plan` answer what `plan_and_answer` / the executor answer for
that tenant in-process (the full data read back from the ref when the result
was over the budget), and every ref one tenant made is neither listed nor
readable (resources/read, get_ref) by the other: to it, the ref does not exist.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_helpers import error_of, structured, without_trace
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.json_form import parse_json
from qdsl.executor.run import execute
from qdsl.facts.demo import DEMO_NOW


async def full_data(session: ClientSession, env: dict[str, Any]) -> Any:
    """The whole `data`: the envelope's, or the stored one's when it was over budget."""
    if "refId" not in env:
        return env["data"]
    read = await session.read_resource(f"qdsl://refs/{env['refId']}")
    text = read.contents[0].text  # type: ignore[union-attr]
    assert hashlib.sha256(text.encode()).hexdigest() == env["sha256"]
    return json.loads(text)["data"]


async def listed_uris(session: ClientSession) -> set[str]:
    """Every resource `resources/list` lists, page after page."""
    uris: set[str] = set()
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_resources(params=params)
        uris |= {str(r.uri) for r in page.resources}
        if page.next_cursor is None:
            return uris
        cursor = page.next_cursor


def check_isolation(
    portal: BlockingPortal,
    sessions: dict[str, ClientSession],
    engine: Engine,
    catalog: Catalog,
    *,
    question: str,
    plan: dict[str, Any],
) -> None:
    refs: dict[str, list[str]] = {tenant: [] for tenant in sessions}
    for tenant, session in sessions.items():
        asked = structured(portal.call(session.call_tool, "ask", {"question": question}))
        expected = plan_and_answer(
            question, tenant, engine=engine, options=AnswerOptions(now=DEMO_NOW)
        ).to_dict()
        got = portal.call(full_data, session, asked)
        assert without_trace(got) == without_trace(expected)
        ran = structured(portal.call(session.call_tool, "run_plan", {"plan": plan}))
        bound = normalize(parse_json(json.dumps(plan)), catalog, PlanContext(tenant_id=tenant))
        expected_run = execute(bound.plan, catalog, engine, tenant, now=DEMO_NOW)
        full_run = portal.call(full_data, session, ran)
        assert full_run["result"]["rows"] == expected_run.model_dump(mode="json")["rows"]
        refs[tenant] += [e["refId"] for e in (asked, ran) if "refId" in e]
    for tenant, made in refs.items():
        for other, session in sessions.items():
            if other == tenant:
                continue
            listed = portal.call(listed_uris, session)
            for ref_id in made:
                assert f"qdsl://refs/{ref_id}" not in listed
                with pytest.raises(MCPError) as caught:
                    portal.call(session.read_resource, f"qdsl://refs/{ref_id}")
                assert caught.value.data["code"] == "ref/ref_not_found"
                refused = portal.call(session.call_tool, "get_ref", {"ref_id": ref_id})
                assert error_of(refused)["code"] == "ref/ref_not_found"


def plans(catalog_entities: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON plans (no tenant: it is the caller's) listing or counting an entity."""
    return st.builds(
        lambda entity, query_type, limit: {
            "query_type": query_type,
            "entity_type": entity,
            **({"limit": limit} if query_type == "list" else {}),
        },
        st.sampled_from(catalog_entities),
        st.sampled_from(["list", "count"]),
        st.integers(1, 50),
    )
