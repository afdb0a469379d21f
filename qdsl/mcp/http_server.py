"""The streamable HTTP transport: each request's bearer token names its tenant.

uvicorn serves the SDK's streamable HTTP app behind `HttpGate` (Host/Origin,
then the token; `http_gate`), with connections bounded where they are read
(`http_conns`): a request must arrive within `request_timeout_s`, and at most
`max_unauthenticated` connections may wait without a valid token (past it,
the one waiting longest is closed). Request
bodies are bounded by the SDK (`max_request_body_size`). On SIGTERM / SIGINT
uvicorn lets calls in flight finish (up to `GRACE_S`), then the database
pool is closed.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from qdsl.dsl.errors import UsageError
from qdsl.mcp.app import build_server
from qdsl.mcp.logs import logger
from qdsl.mcp.service import Service
from qdsl.mcp.tokens import TokenFile
from qdsl.mcp.transports import GRACE_S

log = logger()


@dataclass(frozen=True)
class HttpOptions:
    """What `qdsl mcp --http` bounds (docs/mcp.md, "HTTP hygiene")."""

    # Headers and body of one request must have arrived within this.
    request_timeout_s: float = 10.0
    # Connections without a valid token yet; past it the one waiting longest is closed.
    max_unauthenticated: int = 64
    # Host names clients use besides the address bound (DNS names, a proxy's host).
    allow_hosts: Sequence[str] = ()
    # No MCP session kept between requests: needed when several processes
    # accept on one socket, since a session lives in one process's memory and
    # the next request may reach another (`prefork`).
    stateless: bool = False


def http_tenant(ctx: ServerRequestContext[Any, Any]) -> str:
    """The tenant of the token that authenticated this very request."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    request = ctx.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if isinstance(user, AuthenticatedUser):
        tenant = (user.access_token.claims or {}).get("tenant")
        if isinstance(tenant, str):
            return tenant
    # HttpGate lets no request without a valid token through; refuse anyway.
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


def listen(address: str, *, reuse_port: bool = False) -> socket.socket:
    """The listening socket of `address` (HOST:PORT; port 0 picks a free one);
    with `reuse_port`, one of several bound to the same port (`prefork`)."""
    host, port = parse_address(address)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts them
    return sock


async def serve_http(
    service: Service,
    address: str,
    tokens: TokenFile,
    options: HttpOptions | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve on `sock` (bound to `address`), or on a socket bound here."""
    import uvicorn

    from qdsl.dsl.settings.limits import limits
    from qdsl.mcp.http_conns import ConnectionGate, bounded_protocol
    from qdsl.mcp.http_gate import HttpGate, allowed_hosts

    opts = options or HttpOptions()
    tokens.records()  # a tokens file that cannot be read stops the start, naming its line
    host, _ = parse_address(address)
    sock = sock if sock is not None else listen(address)
    bound = sock.getsockname()[1]
    security = allowed_hosts(host, bound, opts.allow_hosts)
    server = build_server(service, http_tenant)
    sdk_app = server.streamable_http_app(
        host=host,
        # Room for an argument over the input limits, so that it is refused
        # with its typed error (usage/input_bytes_exceeded), not a bare 413.
        max_request_body_size=4 * limits().input_bytes,
        transport_security=security,
        stateless_http=opts.stateless,
    )
    shown = f"[{host}]" if ":" in host else host
    connections = ConnectionGate(
        request_timeout_s=opts.request_timeout_s, max_unauthenticated=opts.max_unauthenticated
    )
    app = HttpGate(sdk_app, tokens, security, connections, base_url=f"http://{shown}:{bound}")
    config = uvicorn.Config(
        app,
        http=bounded_protocol(connections),
        log_level="warning",
        lifespan="on",
        log_config=None,
        # open SSE streams would hold a graceful shutdown forever
        timeout_graceful_shutdown=GRACE_S,
    )
    log.info(
        "serving",
        transport="http",
        url=f"http://{shown}:{bound}/mcp",
        allowed_hosts=security.allowed_hosts,
        request_timeout_s=opts.request_timeout_s,
        max_unauthenticated=opts.max_unauthenticated,
        stateless=opts.stateless,
    )
    # uvicorn stops on SIGTERM / SIGINT by itself, letting calls in flight finish
    # (up to GRACE_S), then raises the signal again for the handler it found:
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
