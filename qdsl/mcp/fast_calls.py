"""`tools/call` over stdio answered where its line is read, past the SDK's
per-request dispatch.

Why: for each request the SDK's stdio loop relays the message through a
memory stream to its dispatcher task, starts an anyio task for it in a task
group, enters two cancel scopes, builds a request context and a session,
validates the params twice, and dumps the result three times (handler model,
the per-version check, the response). For `ask` that was about 200 µs of the
event loop's CPU per call (about 420 µs with it, 220 without), a third of
what the server added to the answer itself. A host asks many questions on
one connection; this path gives the same answers, the same errors and the
same bytes on the wire.

What stays the SDK's: everything but a plain `tools/call` of one of our tools
on a connection whose `initialize` the SDK has accepted, at a protocol version
whose `CallToolResult` the SDK sends exactly as `results.wire_result` builds it
(`FAST_VERSIONS`, the handshake era's; tested against the SDK's own
`serialize_server_result`). The request is parsed by the SDK's own message
adapter (as the transport does for every line) and checked by the SDK's own
validators of the method and its params;
anything they refuse, a `_meta`, an unknown tool, an `initialize` not yet
answered, another era or version, goes to the SDK unchanged and is answered
as before. What the SDK's dispatcher does for a request is done here too:

* the response carries the request's id, written by the same write stream;
* `notifications/cancelled` naming a request in flight cancels it (its
  statement is interrupted, as in the SDK's path) and nothing is answered for
  it; the notification also goes on to the SDK, as it does anyway;
* calls run concurrently (one asyncio task each), bounded by the same
  `--max-concurrency` slot and `--call-timeout` inside `tools.call_tool`;
* when the connection ends (stdin closed, SIGTERM), calls in flight are
  cancelled and answered `Connection closed` (-32000), as the SDK answers its
  own, before the write stream closes.

The SDK still serves `initialize`, `tools/list`, resources, `ping` and every
error of the protocol itself. `tests/mcp_server/test_mcp_fast_path.py` drives
both paths with the SDK's client and raw lines and compares them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import (
    cancelled_request_id_from_params,
    handler_exception_to_error_data,
)
from mcp.shared.message import SessionMessage
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from qdsl.mcp import tools
from qdsl.mcp.results import Wire

# Protocol versions at which the SDK sends a `CallToolResult` as built here,
# unchanged (its per-version check keeps every field of ours at each handshake
# version; a test holds this against the installed SDK). Not the 2026 era, whose
# results carry more (`resultType`, a `serverInfo` stamp).
FAST_VERSIONS = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
_ARGUMENT_KEYS = frozenset({"name", "arguments"})
# As the SDK's dispatcher, bounded: a write of the closing error that cannot go
# out does not hold the shutdown.
_CLOSE_WRITE_S = 1.0

Send = Callable[[SessionMessage], Awaitable[None]]
Call = Callable[[str, dict[str, Any] | None], Awaitable[Wire]]


@dataclass
class _InFlight:
    task: asyncio.Task[None] | None = None
    cancelled_by_peer: bool = False
    answering: bool = False


class FastCalls:
    """The fast path of one stdio connection: `take` is offered every message
    read; `observe` is a `Server.middleware` that learns the connection's
    SDK session (whose `client_params` and `protocol_version` are the
    handshake's state) when `initialize` passes through it."""

    def __init__(self, call: Call, send: Send) -> None:
        self._call, self._send = call, send
        self._session: ServerSession | None = None
        self._initializes = 0
        self._in_flight: dict[types.RequestId, _InFlight] = {}
        self._closed = False

    async def observe(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "initialize":
            self._initializes += 1
            # a second initialize may change the version: the SDK serves the rest
            self._session = ctx.session if self._initializes == 1 else None
        return await call_next(ctx)

    def _version(self) -> str | None:
        """The negotiated version once the SDK has accepted `initialize`, else None."""
        session = self._session
        if session is None or session.client_params is None:
            return None
        version = session.protocol_version
        return version if version in FAST_VERSIONS else None

    def take(self, message: types.JSONRPCMessage) -> bool:
        """Whether `message` is answered here; if not, the SDK gets it."""
        if isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/cancelled":
                self._peer_cancelled(message.params)
            return False
        if not isinstance(message, types.JSONRPCRequest) or message.method != "tools/call":
            return False
        params = message.params
        version = self._version()
        if self._closed or version is None or params is None or not params.keys() <= _ARGUMENT_KEYS:
            return False
        name = params.get("name")
        if not isinstance(name, str) or name not in tools.BY_NAME:
            return False
        key = coerce_request_id(message.id)
        if key in self._in_flight:
            return False
        try:
            methods.validate_client_request("tools/call", version, params)
            typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        except (KeyError, ValueError, ValidationError):
            return False
        state = _InFlight()
        self._in_flight[key] = state
        state.task = asyncio.get_running_loop().create_task(
            self._serve(message.id, key, state, typed.name, typed.arguments)
        )
        return True

    def _peer_cancelled(self, params: Mapping[str, Any] | None) -> None:
        request_id = cancelled_request_id_from_params(params)
        if request_id is None:
            return
        state = self._in_flight.get(coerce_request_id(request_id))
        if state is not None and state.task is not None and not state.answering:
            state.cancelled_by_peer = True
            state.task.cancel()

    async def _serve(
        self,
        request_id: types.RequestId,
        key: types.RequestId,
        state: _InFlight,
        name: str,
        arguments: dict[str, Any] | None,
    ) -> None:
        message: types.JSONRPCMessage
        try:
            try:
                result = await self._call(name, arguments)
            except Exception as exc:  # as the SDK's dispatcher answers a handler's failure
                error = handler_exception_to_error_data(exc) or types.ErrorData(
                    code=0, message=str(exc)
                )
                message = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
            else:
                message = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
            if state.cancelled_by_peer:
                return
            state.answering = True
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._send(SessionMessage(message))
        except asyncio.CancelledError:
            # cancelled by the peer: never answered (the spec); by the end of the
            # connection: answered as the SDK answers its own requests in flight
            if not state.cancelled_by_peer and not state.answering:
                error = types.ErrorData(code=types.CONNECTION_CLOSED, message="Connection closed")
                closed = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
                with contextlib.suppress(
                    anyio.BrokenResourceError, anyio.ClosedResourceError, TimeoutError
                ):
                    async with asyncio.timeout(_CLOSE_WRITE_S):
                        await self._send(SessionMessage(closed))
        finally:
            if self._in_flight.get(key) is state:
                del self._in_flight[key]

    async def close(self) -> None:
        """Cancel the calls in flight and wait for their answers to be written."""
        self._closed = True
        tasks = [s.task for s in self._in_flight.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
