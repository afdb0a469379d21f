"""The MCP server: the SDK's low-level `Server` with qdsl's handlers.

The low-level server (not the decorator-based `MCPServer`) because every
schema here is qdsl's own: input schemas from the tools' pydantic models and
the plan's JSON Schema, one envelope `outputSchema`, and results built as
`CallToolResult` with `structuredContent`, which the decorator layer would
re-derive from Python signatures.

`tenant_of(ctx)` says whose call it is: the transport decides (a fixed tenant
on stdio, the bearer token's over HTTP); no handler reads a tenant from the
request's arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from qdsl._version import __version__
from qdsl.dsl.errors import QdslError
from qdsl.mcp import errors, resources, tools
from qdsl.mcp.service import Service

TenantOf = Callable[[ServerRequestContext[Any, Any]], str]

INSTRUCTIONS = (
    "qdsl answers questions about this deployment's data with verified, tenant-bound "
    "answers. Start with `ask` for a question in words; `describe_catalog` says what can "
    "be asked. To control the query, write a plan (`plan_schema`, `describe_catalog`) and "
    "`run_plan` it; `compile_plan` shows its SQL. A result too large to return whole comes "
    "back as a preview led by `refId`: read parts with `get_ref` or the whole resource "
    "qdsl://refs/<refId>. `meta.next` in a result suggests the next call with its arguments."
)


def build_server(service: Service, tenant_of: TenantOf) -> Server[Any]:
    async def on_list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tools.list_tools()

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> HandlerResult:
        # the result in its wire form (see `results`), which the SDK checks as it would a model
        return await tools.call_tool(service, tenant_of(ctx), params.name, params.arguments)

    async def on_list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        tenant = tenant_of(ctx)
        cursor = params.cursor if params is not None else None
        try:
            return await service.thread(resources.list_refs, tenant, cursor)
        except QdslError as exc:
            raise errors.rpc_error("refs list", exc) from None

    async def on_list_templates(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[resources.TEMPLATE])

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        tenant = tenant_of(ctx)
        try:
            return await service.thread(resources.read_ref, tenant, params.uri)
        except QdslError as exc:
            raise errors.rpc_error("refs get", exc) from None
        except Exception as exc:
            raise errors.rpc_error("refs get", errors.unexpected("refs get", exc)) from None

    server: Server[Any] = Server(
        "qdsl",
        version=__version__,
        title="qdsl: verified, tenant-bound answers",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_templates,
        on_read_resource=on_read_resource,
    )
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)
    # The SDK wraps every message in an OpenTelemetry span by default, a cost on
    # every call even with no exporter; qdsl's own audit log records each request.
    server.middleware = [_listed_tools]
    return server


async def _listed_tools(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """`tools/list` answered from `tools.listed`: the SDK's own result for the
    connection's version, made once (a host lists tools often; checking and
    dumping the schemas each time cost about a millisecond).

    A middleware that returns without `call_next` owns its result (the SDK's
    contract), so this answers only what the SDK would answer the same way: a
    connection past `initialize` (the SDK's gate surely open), of the handshake
    era (a 2026 result also carries a per-response stamp), with no params (the
    tools are one page; a cursor or `_meta` goes to the SDK and its checks)."""
    if ctx.method == "tools/list" and not ctx.params:
        version = ctx.session.protocol_version
        if ctx.session.client_params is not None and version in HANDSHAKE_PROTOCOL_VERSIONS:
            return tools.listed(version)
    return await call_next(ctx)
