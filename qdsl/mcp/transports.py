"""The stdio transport: one tenant, fixed at start (streamable HTTP, each
request's bearer token naming its tenant, is `http_server`).

It stops cleanly: on SIGTERM / SIGINT the calls in flight are cancelled
(their statements with them) and the database pool is closed, and the host
closing stdin ends the server the same way. Logs go to stderr only: on
stdio, stdout is the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from qdsl.mcp.app import build_server
from qdsl.mcp.logs import logger
from qdsl.mcp.service import Service
from qdsl.mcp.stdio_lines import Overlong, PipeLines

log = logger()

# How long a stopping server waits for calls in flight.
GRACE_S = 10


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("stopping", signal=signal.Signals(signum).name)
            scope.cancel()
            return


def _overlong(line: Overlong) -> types.JSONRPCError:
    """The answer to a line over the length limit: its id, if it could be found."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=line.request_id,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"the message is over the limit of {line.limit} bytes and was dropped",
            data={
                "type": "usage",
                "subtype": "message_too_large",
                "code": "usage/message_too_large",
                "details": {"max_bytes": line.limit},
            },
        ),
    )


def _malformed(exc: Exception) -> types.JSONRPCError:
    """JSON-RPC's answer to a line it cannot take: -32700 if it is not JSON at all,
    -32600 if it is JSON but not a request, notification or response."""
    from pydantic import ValidationError

    not_json = not isinstance(exc, ValidationError) or any(
        e["type"] == "json_invalid" for e in exc.errors(include_input=False)
    )
    log.warning("malformed_message", reason="not JSON" if not_json else "not JSON-RPC")
    subtype, code, what = (
        ("bad_json", types.PARSE_ERROR, "not JSON")
        if not_json
        else ("bad_message", types.INVALID_REQUEST, "JSON, but not a JSON-RPC 2.0 message")
    )
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=code,
            message=f"the line is {what}; send one JSON-RPC 2.0 message a line",
            data={"type": "usage", "subtype": subtype, "code": f"usage/{subtype}"},
        ),
    )


class _Receives(Protocol):
    """What `AnswerMalformed` reads: the read side `stdio_server` yields."""

    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class _Sends(Protocol):
    """What the transport writes its own answers to: the write side `stdio_server` yields."""

    async def send(self, item: SessionMessage, /) -> None: ...


class _Stream:
    """What the SDK asks of a stream besides send/receive: an async context
    manager that closes it on exit."""

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _ReadStream(_Stream):
    """A read stream is also an async iterator of what `receive` gives."""

    async def receive(self) -> SessionMessage | Exception:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class AnswerMalformed(_ReadStream):
    """The read side of a transport, answering each line that is not a JSON-RPC
    message with a parse error (`id: null`) instead of dropping it silently."""

    def __init__(
        self,
        inner: _Receives,
        write: _Sends,
    ) -> None:
        self.inner, self.write = inner, write

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            await self.write.send(SessionMessage(_malformed(item)))

    async def aclose(self) -> None:
        await self.inner.aclose()


class PipeWriter:
    """stdout written by the event loop (the SDK writes through a worker thread,
    two thread hops per message); fd 1 itself is pointed at stderr, so stray
    output of any library lands in the log, never in the protocol."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    @classmethod
    async def open(cls) -> PipeWriter | None:
        """Over fd 1 when it is a pipe; else None (the SDK's own writer)."""
        import os

        loop = asyncio.get_running_loop()
        pipe = os.fdopen(os.dup(1), "wb", buffering=0)
        try:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, pipe
            )
        except (OSError, ValueError):
            pipe.close()
            return None
        os.dup2(2, 1)
        return cls(asyncio.StreamWriter(transport, protocol, None, loop))

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


class LineReadStream(_ReadStream):
    """The server's read stream over stdin's lines, parsed where they are read.

    The SDK's `stdio_server` reads in one task and hands each message to the
    server through a memory stream (a task switch per message); here the
    server's own receive reads and parses the line. A line that is not a
    JSON-RPC message is answered at once with a parse error (`id: null`)."""

    def __init__(self, lines: PipeLines, write: LineWriteStream) -> None:
        self.lines, self.write = lines, write

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                line = await anext(self.lines)
            except StopAsyncIteration:
                raise anyio.EndOfStream from None
            if isinstance(line, Overlong):
                await self.write.send(SessionMessage(_overlong(line)))
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:
                await self.write.send(SessionMessage(_malformed(exc)))
                continue
            return SessionMessage(message)


class LineWriteStream(_Stream):
    """The server's write stream onto stdout: each message serialized and written
    by the task that sends it (the SDK's `stdio_server` passes it to a writer
    task first). Writes of whole lines never interleave: the loop's pipe
    transport buffers each at once; a full pipe holds senders until it drains."""

    def __init__(self, out: PipeWriter) -> None:
        self.out = out
        self.closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        await self.out.write(line)
        if self.out.writer.transport.get_write_buffer_size():
            await self.out.flush()

    async def aclose(self) -> None:
        if not self.closed:
            # the host may be gone already: what it did not read is lost either way
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(GRACE_S),
                contextlib.suppress(OSError),
            ):
                self.closed = True
                await self.out.flush()
            self.closed = True


@asynccontextmanager
async def _stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) over stdin / stdout: our line streams when both are pipes
    (as hosts spawn servers), else the SDK's `stdio_server` (a terminal, a file)."""
    stdin = await PipeLines.open()
    stdout = await PipeWriter.open()
    if stdin is not None and stdout is not None:
        write = LineWriteStream(stdout)
        yield LineReadStream(stdin, write), write
        return
    async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):  # type: ignore[arg-type]
        yield AnswerMalformed(read, write), write


async def serve_stdio(service: Service, tenant: str) -> None:
    server = build_server(service, lambda _ctx: tenant)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_stop_on_signal, tg.cancel_scope)
            async with _stdio_streams() as (read, write):
                log.info("serving", transport="stdio", tenant=tenant)
                await server.run(read, write, server.create_initialization_options())
            log.info("stopping", reason="stdin closed")
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await service.close()
