"""The two transports: stdio (one tenant, fixed at start) and streamable HTTP
(each request's bearer token names its tenant).

Both stop cleanly: on SIGTERM / SIGINT the calls in flight are cancelled
(their statements with them) and the database pool is closed; on stdio, the
host closing stdin ends the server the same way. Logs go to stderr only:
on stdio, stdout is the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from qdsl.dsl.errors import UsageError
from qdsl.mcp import tools
from qdsl.mcp.app import build_server
from qdsl.mcp.fast_calls import FastCalls
from qdsl.mcp.logs import logger
from qdsl.mcp.service import Service
from qdsl.mcp.tokens import TokenFile

log = logger()

# How long a stopping HTTP server waits for calls in flight.
_GRACE_S = 10


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("stopping", signal=signal.Signals(signum).name)
            scope.cancel()
            return


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
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
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


# The longest line stdin may send: room for an argument over the input limits,
# so that it is refused with its typed error rather than as a broken line.
def _max_line() -> int:
    from qdsl.dsl.limits import limits

    return 4 * limits().input_bytes + 1024 * 1024


_OVERLONG = "\x00 a line over the length limit"  # parses as nothing: answered -32700


class PipeLines:
    """stdin as lines read by the event loop itself, not by a worker thread.

    The SDK reads stdin in a thread, and a thread blocked in read() cannot be
    cancelled: SIGTERM would wait for the host's next line. Read by the loop,
    a stop cancels the read like any other await.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    @classmethod
    async def open(cls) -> PipeLines | None:
        """Over fd 0 when it is a pipe (as hosts spawn servers); else None."""
        import os

        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_max_line())
        pipe = os.fdopen(os.dup(0), "rb", buffering=0)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        except (OSError, ValueError):
            pipe.close()
            return None
        return cls(reader)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readline()
        except ValueError:  # over the limit: drop the rest of that line, answer it
            while True:
                try:
                    await self.reader.readline()
                except ValueError:
                    continue
                return _OVERLONG
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


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
        self.fast: FastCalls | None = None

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                line = await anext(self.lines)
            except StopAsyncIteration:
                raise anyio.EndOfStream from None
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:
                await self.write.send(SessionMessage(_malformed(exc)))
                continue
            if self.fast is not None and self.fast.take(message):
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
        self.fast: FastCalls | None = None

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
                anyio.move_on_after(_GRACE_S),
                contextlib.suppress(OSError),
            ):
                if self.fast is not None:  # its calls in flight are answered first
                    await self.fast.close()
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
                if isinstance(read, LineReadStream) and isinstance(write, LineWriteStream):
                    call = partial(tools.call_tool, service, tenant, dispatch="fast")
                    fast = FastCalls(call, write.send)
                    read.fast = write.fast = fast
                    server.middleware = [*server.middleware, fast.observe]
                log.info("serving", transport="stdio", tenant=tenant)
                await server.run(read, write, server.create_initialization_options())
            log.info("stopping", reason="stdin closed")
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await service.close()


# ------------------------------------------------------------------------- HTTP


class TokenVerifier:
    """The SDK's TokenVerifier over the tokens file: a token is an active entry's."""

    def __init__(self, tokens: TokenFile) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        record = self.tokens.tenant_of(token)
        if record is None:
            log.warning("token_refused", reason="unknown or revoked")
            return None
        return AccessToken(
            token=token, client_id=record.token_id, scopes=[], claims={"tenant": record.tenant}
        )


def http_tenant(ctx: ServerRequestContext[Any, Any]) -> str:
    """The tenant of the token that authenticated this very request."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    request = ctx.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if isinstance(user, AuthenticatedUser):
        tenant = (user.access_token.claims or {}).get("tenant")
        if isinstance(tenant, str):
            return tenant
    # The auth middleware lets no request without a token through; refuse anyway.
    raise MCPError(types.INVALID_REQUEST, "no tenant: the request carried no valid bearer token")


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(
            "bad_address",
            f"--http takes HOST:PORT, got {text!r}",
            hint="for example --http 127.0.0.1:8765 (port 0 picks a free port)",
        )
    return host.strip("[]") or "127.0.0.1", int(port)


async def serve_http(service: Service, address: str, tokens: TokenFile) -> None:
    import uvicorn
    from mcp.server.auth.settings import AuthSettings
    from pydantic import AnyHttpUrl

    from qdsl.dsl.limits import limits

    host, port = parse_address(address)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts them
    bound = sock.getsockname()[1]
    server = build_server(service, http_tenant)
    app = server.streamable_http_app(
        host=host,
        # Room for an argument over the input limits, so that it is refused
        # with its typed error (usage/input_bytes_exceeded), not a bare 413.
        max_request_body_size=4 * limits().input_bytes,
        # Only issuer_url is required: with no authorization server and no
        # resource_server_url the SDK serves no OAuth routes, only bearer checks.
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(f"http://127.0.0.1:{bound}"), resource_server_url=None
        ),
        token_verifier=TokenVerifier(tokens),
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        log_config=None,
        # open SSE streams would hold a graceful shutdown forever
        timeout_graceful_shutdown=_GRACE_S,
    )
    shown = f"[{host}]" if ":" in host else host
    log.info("serving", transport="http", url=f"http://{shown}:{bound}/mcp")
    # uvicorn stops on SIGTERM / SIGINT by itself, letting calls in flight finish
    # (up to _GRACE_S), then raises the signal again for the handler it found:
    # this one notes it, so a stop asked for is a clean exit (0), not a kill.
    noted = {s: signal.signal(s, _note_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        for signum, handler in noted.items():
            signal.signal(signum, handler)
        with anyio.CancelScope(shield=True):
            await service.close()
        log.info("stopped")


def _note_signal(signum: int, _frame: Any) -> None:
    log.info("stopping", signal=signal.Signals(signum).name)
