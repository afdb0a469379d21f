"""What every HTTP request passes before the SDK sees it: Host/Origin, then its token.

`HttpGate` is the ASGI app `qdsl mcp --http` serves, wrapped around the SDK's
streamable HTTP app:

1. **Host and Origin** (DNS rebinding), on every bind address: the SDK's own
   `TransportSecurityMiddleware`, with the hosts `allowed_hosts` names for the
   address bound (the SDK enables its check by itself only for 127.0.0.1,
   localhost and ::1). A refusal is 421 (Host) or 403 (Origin), logged.
2. **The bearer token**, looked up in the tokens file. Every refusal is one
   `request_refused` log line with its reason — `no_token`, `not_bearer`,
   `unknown_token`, `revoked_token` (with the token's id), `tokens_unreadable`
   (with the file's bad line) — and the client's address, never the token.
   The answer is 401 with the challenge the MCP authorization spec asks for,
   `WWW-Authenticate: Bearer realm="qdsl", resource_metadata="<url>"` (with
   `error="invalid_token"` when a token was sent, RFC 6750 §3.1); a tokens
   file that cannot be read is 503 for everyone (fail closed: a revocation on
   its bad line must not be lost).
3. The resource metadata (RFC 9728) at
   `/.well-known/oauth-protected-resource/mcp`: the resource's URL and
   `bearer_methods_supported: ["header"]`. It names no authorization server:
   qdsl's tokens are issued out of band (`qdsl mcp token add`), not by OAuth.

A request that passes carries the token's record as the SDK's
`AuthenticatedUser` (`scope["user"]`), whose tenant `http_tenant` reads, and
its connection is counted as authenticated (`http_conns`). qdsl's tokens
have no audience: each is valid for the servers of the state dir that holds
its hash, so there is no "wrong audience" to refuse.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from qdsl.dsl.errors import QdslError
from qdsl.mcp.http_conns import ConnectionGate
from qdsl.mcp.logs import logger
from qdsl.mcp.tokens import TokenFile

log = logger()

MCP_PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource" + MCP_PATH
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def allowed_hosts(host: str, port: int, extra: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host (and Origin) values a request to `host:port` may carry: the
    address itself, the loopback names when it is loopback or every interface,
    and `extra` (what an operator names with --allow-host: a DNS name or a
    proxy's public host, with or without a port)."""
    shown = f"[{host}]" if ":" in host else host
    names: list[str] = [shown]
    if _is_loopback(host) or _is_any(host):
        names += [n for n in _LOOPBACK_NAMES if n != shown]
    hosts = [f"{n}:{port}" for n in names]
    for name in extra:
        hosts += [name] if ":" in name.lstrip("[").split("]")[-1] else [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_any(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


class HttpGate:
    """The ASGI app in front of the SDK's (see the module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        tokens: TokenFile,
        security: TransportSecuritySettings,
        connections: ConnectionGate,
        base_url: str,
    ) -> None:
        self.app, self.tokens, self.connections = app, tokens, connections
        self.security = TransportSecurityMiddleware(security)
        self.base_url = base_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager
            await self.app(scope, receive, send)
            return
        client = _client(scope)
        request = Request(scope)
        refused = await self.security.validate_request(request, is_post=False)
        if refused is not None:
            log.warning(
                "request_refused",
                reason="bad_host" if refused.status_code == 421 else "bad_origin",
                client=client,
                status=refused.status_code,
            )
            await refused(scope, receive, send)
            return
        base = self._base(request.headers)
        if scope["path"] == METADATA_PATH:
            await _json(send, 200, self._metadata(base))
            return
        header = request.headers.get("authorization")
        if header is None or not header.strip():
            await self._refuse(send, base, client, "no_token", token_sent=False)
            return
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._refuse(send, base, client, "not_bearer", token_sent=False)
            return
        try:
            record = self.tokens.lookup(token.strip())
        except QdslError as exc:
            log.error(
                "request_refused",
                reason="tokens_unreadable",
                client=client,
                line=exc.details.get("line"),
                status=503,
            )
            # what is wrong, and where, is the operator's to read (the log), not a client's
            await _json(
                send,
                503,
                {
                    "error": "temporarily_unavailable",
                    "error_description": "the server cannot check tokens now; retry later",
                },
                [(b"retry-after", b"30")],
            )
            return
        if record is None:
            await self._refuse(send, base, client, "unknown_token", token_sent=True)
            return
        if record.revoked_at is not None:
            await self._refuse(
                send, base, client, "revoked_token", token_sent=True, token_id=record.token_id
            )
            return
        self.connections.authenticated(scope.get("client"))
        access = AccessToken(
            token=token.strip(),
            client_id=record.token_id,
            scopes=[],
            claims={"tenant": record.tenant},
        )
        scope = {**scope, "user": AuthenticatedUser(access), "auth": AuthCredentials([])}
        await self.app(scope, receive, send)

    def _base(self, headers: Headers) -> str:
        # the Host header has passed the allowed hosts: the name the client used
        host = headers.get("host")
        return f"http://{host}" if host else self.base_url

    def _metadata(self, base: str) -> dict[str, Any]:
        return {
            "resource": base + MCP_PATH,
            "bearer_methods_supported": ["header"],
            "resource_name": "qdsl",
        }

    async def _refuse(
        self,
        send: Send,
        base: str,
        client: str | None,
        reason: str,
        *,
        token_sent: bool,
        token_id: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {"reason": reason, "client": client, "status": 401}
        if token_id is not None:
            fields["token_id"] = token_id
        log.warning("request_refused", **fields)
        challenge = f'Bearer realm="qdsl", resource_metadata="{base}{METADATA_PATH}"'
        body: dict[str, str] = {"error": "unauthorized", "error_description": _WHY[reason]}
        if token_sent:
            challenge += f', error="invalid_token", error_description="{_WHY[reason]}"'
            body["error"] = "invalid_token"
        await _json(send, 401, body, [(b"www-authenticate", challenge.encode("latin-1"))])


_WHY = {
    "no_token": "a bearer token is required (qdsl mcp token add --tenant T)",
    "not_bearer": "send the token as Authorization: Bearer <token>",
    "unknown_token": "the token is not known to this server",
    "revoked_token": "the token has been revoked",
}


def _client(scope: Scope) -> str | None:
    peer = scope.get("client")
    return f"{peer[0]}:{peer[1]}" if peer else None


async def _json(
    send: Send, status: int, body: dict[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
