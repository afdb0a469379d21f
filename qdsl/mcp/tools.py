"""The fixed tool set and the `tools/call` dispatcher.

Six tools, all read-only (`readOnlyHint: true`), each returning an envelope as
`structuredContent` (schema `ENVELOPE_SCHEMA`) plus a short text. Arguments
are validated by the tool's pydantic model before anything runs; a call that
fails returns the typed error envelope with `isError: true` and the server
goes on serving.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import methods
from pydantic import ValidationError

from qdsl.dsl.errors import QdslError, UsageError
from qdsl.mcp import errors
from qdsl.mcp.logs import logger
from qdsl.mcp.results import Wire, tool_result
from qdsl.mcp.schemas import (
    ENVELOPE_SCHEMA,
    AskInput,
    CompilePlanInput,
    DescribeCatalogInput,
    GetRefInput,
    PlanSchemaInput,
    RunPlanInput,
    _Input,
    input_schema,
)
from qdsl.mcp.service import Envelope, Service

log = logger()

Runner = Callable[[Service, str, Any], Awaitable[Envelope]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation: str  # the CLI operation it is, named in its envelope
    title: str
    description: str
    model: type[_Input]
    run: Runner

    def tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=input_schema(self.model),
            output_schema=ENVELOPE_SCHEMA,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )


def _ask(s: Service, tenant: str, a: AskInput) -> Awaitable[Envelope]:
    return s.ask(tenant, a.question)


def _run(s: Service, tenant: str, a: RunPlanInput) -> Awaitable[Envelope]:
    return s.run_plan(tenant, a.plan)


def _compile(s: Service, tenant: str, a: CompilePlanInput) -> Awaitable[Envelope]:
    return s.compile_plan(tenant, a.plan, a.dialect)


def _catalog(s: Service, tenant: str, a: DescribeCatalogInput) -> Awaitable[Envelope]:
    return s.describe_catalog(tenant, a.entity)


def _schema(s: Service, tenant: str, _a: PlanSchemaInput) -> Awaitable[Envelope]:
    return s.plan_schema(tenant)


def _get_ref(s: Service, tenant: str, a: GetRefInput) -> Awaitable[Envelope]:
    return s.get_ref(tenant, a.ref_id, a.expr)


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "ask",
        "ask",
        "Ask a verified question",
        "Answer a question about this deployment's data: the whole qdsl pipeline (gate, "
        "plan, execute for the server's tenant, verify). Returns `status` (answered, gated, "
        "clarify, insufficient_evidence, not_covered, refused), the answer contract, the "
        "rendered `text`, the contract's data under `answer`, the evidence cited and the "
        "plan used. Nothing unverified is ever returned as an answer.",
        AskInput,
        _ask,
    ),
    ToolSpec(
        "run_plan",
        "run",
        "Run a plan",
        "Execute a plan (plan text or the JSON plan; see plan_schema and describe_catalog) "
        "for the server's tenant and verify the answer. A plan naming another tenant is "
        "refused (policy/tenant_scope_mismatch).",
        RunPlanInput,
        _run,
    ),
    ToolSpec(
        "compile_plan",
        "compile",
        "Compile a plan to SQL",
        "Compile a plan to SQL and its bound parameters without touching the database: "
        "what run_plan would execute.",
        CompilePlanInput,
        _compile,
    ),
    ToolSpec(
        "describe_catalog",
        "catalog",
        "Describe the catalog",
        "What may be asked: the entities, their fields (type, operators, allowed values), "
        "the query types and templates of each entity.",
        DescribeCatalogInput,
        _catalog,
    ),
    ToolSpec(
        "plan_schema",
        "schema",
        "JSON Schema of a plan",
        "The JSON Schema of the JSON plan form, for writing plans for run_plan and compile_plan.",
        PlanSchemaInput,
        _schema,
    ),
    ToolSpec(
        "get_ref",
        "refs get",
        "Read a stored result",
        "Read part of a stored large result: `ref_id` is a result's refId, `expr` a "
        "JMESPath expression over its envelope (default `data`).",
        GetRefInput,
        _get_ref,
    ),
)
BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in SPECS}


@functools.cache
def _tools() -> tuple[types.Tool, ...]:
    return tuple(spec.tool() for spec in SPECS)


def list_tools() -> types.ListToolsResult:
    # built once: the schemas are fixed for the process (a host lists tools often)
    return types.ListToolsResult(tools=list(_tools()))


@functools.cache
def listed(version: str) -> Wire:
    """The `tools/list` result as the SDK sends it at protocol `version`, made
    once by the SDK's own serializer (`serialize_server_result`): checking and
    dumping the large input schemas on every call cost about a millisecond."""
    dumped = list_tools().model_dump(by_alias=True, mode="json", exclude_none=True)
    return methods.serialize_server_result("tools/list", version, dumped)


def _bad_arguments(spec: ToolSpec, exc: ValidationError) -> UsageError:
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
        for e in exc.errors(include_input=False, include_url=False)
    ]
    return UsageError(
        "bad_arguments",
        f"the arguments of {spec.name} do not match its input schema: {problems[0]}",
        hint=f"see the inputSchema of {spec.name} in tools/list; no tool takes a tenant",
        details={"problems": problems[:10]},
    )


async def call_tool(
    service: Service,
    tenant: str,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    dispatch: str = "sdk",
) -> Wire:
    """The tool's result in wire form; `dispatch` (who handed the call over: the
    SDK's server, the only dispatcher) is noted in the call's log line."""
    spec = BY_NAME.get(name)
    if spec is None:
        raise MCPError(
            types.INVALID_PARAMS,
            f"unknown tool {name[:80]!r}; the tools are {', '.join(BY_NAME)}",
        )
    started = time.monotonic()
    outcome = "ok"
    try:
        try:
            args = spec.model.model_validate(arguments or {})
        except ValidationError as exc:
            raise _bad_arguments(spec, exc) from None
        with service.slot():
            # asyncio's own timeout: a third of anyio's fail_after's cost on every call
            async with asyncio.timeout(service.config.call_timeout_s):
                env = await spec.run(service, tenant, args)
        return tool_result(env)
    except QdslError as exc:
        outcome = exc.code
        return errors.tool_error(spec.operation, exc, tenant)
    except TimeoutError:
        error = errors.call_timeout(service.config.call_timeout_s)
        outcome = error.code
        return errors.tool_error(spec.operation, error, tenant)
    except Exception as exc:
        error = errors.unexpected(spec.operation, exc)
        outcome = error.code
        return errors.tool_error(spec.operation, error, tenant)
    except BaseException:
        outcome = "cancelled"
        raise
    finally:
        # written once the result is on its way: a log line is no part of a call's latency
        ms = round((time.monotonic() - started) * 1000, 1)
        asyncio.get_running_loop().call_soon(
            partial(
                log.info,
                "tool_call",
                tool=name,
                tenant=tenant,
                outcome=outcome,
                ms=ms,
                dispatch=dispatch,
            )
        )
