"""Typed errors over MCP: the CLI's error envelope, in the shape MCP expects.

A tool that fails returns a tool result with `isError: true` whose
`structuredContent` is the CLI's error envelope (`type`, `subtype`, `code`,
`message`, `retryable`, `hint`, `details`), so the model reads the same hint a
person reads on stderr and can correct its call. A request that is not a tool
call (`resources/read`) fails with a JSON-RPC error whose `data` is that
envelope's `error`. Nothing the server raises by accident reaches the wire as
a traceback: it is `internal/unexpected`, logged on stderr.
"""

from __future__ import annotations

import mcp_types as types
from mcp.shared.exceptions import MCPError

from qdsl.dsl.errors import ErrorType, InternalError, PolicyError, QdslError
from qdsl.envelope.emit import error_envelope
from qdsl.mcp.logs import logger
from qdsl.mcp.results import Wire, wire_result

log = logger()

# JSON-RPC codes for a failed resources/read (MCP names -32002 "resource not found").
RESOURCE_NOT_FOUND = -32002
_RPC_CODE = {
    ErrorType.USAGE: types.INVALID_PARAMS,
    ErrorType.VALIDATION: types.INVALID_PARAMS,
    ErrorType.POLICY: types.INVALID_PARAMS,
    ErrorType.REF: RESOURCE_NOT_FOUND,
}


def error_text(error: QdslError) -> str:
    text = f"error {error.code}: {error.message}"
    if error.hint:
        text += f" (hint: {error.hint})"
    return text


def tool_error(operation: str, error: QdslError, tenant: str | None = None) -> Wire:
    """The result of a tool call that failed (wire form, see `results`): the error
    envelope, flagged isError, whose `meta.traceId` names the call's audit line
    (written here unless the call wrote it already)."""
    from qdsl.audit import audited_error

    error = audited_error(error, operation=operation, tenant=tenant)
    return wire_result(
        [types.TextContent(type="text", text=error_text(error))],
        error_envelope(operation, error),
        is_error=True,
    )


def rpc_error(operation: str, error: QdslError) -> MCPError:
    """A JSON-RPC error carrying the error envelope's `error` as its data."""
    code = _RPC_CODE.get(error.type, types.INTERNAL_ERROR)
    return MCPError(code, error_text(error), data=error_envelope(operation, error)["error"])


def unexpected(operation: str, exc: BaseException) -> InternalError:
    """A defect: logged with its traceback on stderr, reported without one."""
    log.error("unexpected_failure", operation=operation, exc_info=exc)
    return InternalError(
        "unexpected",
        f"qdsl failed unexpectedly ({type(exc).__name__})",
        hint="this is a defect in qdsl; the server log (stderr) has the traceback",
    )


def busy(limit: int) -> PolicyError:
    return PolicyError(
        "server_busy",
        f"the server is already running {limit} calls, its limit",
        hint="retry in a moment; the operator can raise `qdsl mcp --max-concurrency`",
        retryable=True,
        details={"max_concurrency": limit},
    )


def call_timeout(seconds: float) -> QdslError:
    from qdsl.dsl.errors import DatabaseError

    return DatabaseError(
        "call_timeout",
        f"the call did not finish within {seconds:g} s and was cancelled",
        hint="narrow the question or plan; the operator can raise `qdsl mcp --call-timeout`",
        retryable=True,
        details={"call_timeout_s": seconds},
    )
