"""HTTP connections bounded where uvicorn reads them: a request timeout and a
cap on connections that have not authenticated.

uvicorn bounds the time a connection may stay idle between requests
(`timeout_keep_alive`), not the time a request takes to arrive: a client
sending its headers a byte at a time held a connection as long as it liked,
and 600 of them held 600. uvicorn takes the HTTP protocol class to serve
connections with (`Config(http=...)`, as `--http h11` names its own); this
one is its h11 protocol with two bounds added:

* **a request timeout**: from a request's first byte (from the connection's
  start, for its first), its headers and body must have arrived within
  `request_timeout_s`, or the connection is closed (logged `request_timeout`).
  A response, however long it streams, is not bounded: once the request is
  whole, the clock stops (h11 says when: the client's side is `DONE`).
* **a cap on unauthenticated connections**: a connection counts as
  unauthenticated until one of its requests carried a valid token
  (`HttpGate` says so); past `max_unauthenticated` such connections, the one
  that has waited longest is closed to make room (logged
  `connection_dropped`, at most once a second). Closing the oldest rather
  than the newest keeps the server reachable: a client that sends its request
  at once is authenticated long before it is the oldest, while connections
  held open to fill the cap are the first to go.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from qdsl.mcp.logs import logger

log = logger()

# h11's states of the client's side in which its request is whole (or never will be).
_RECEIVED = frozenset({h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR})
_LOG_EVERY_S = 1.0


class ConnectionGate:
    """The server's bounds and the connections not yet authenticated, oldest first."""

    def __init__(self, *, request_timeout_s: float, max_unauthenticated: int) -> None:
        self.request_timeout_s = request_timeout_s
        self.max_unauthenticated = max_unauthenticated
        # client address (host, port) -> its connection's transport
        self.unauthenticated: OrderedDict[Any, asyncio.BaseTransport] = OrderedDict()
        self.dropped = 0
        self._logged_at = 0.0

    def authenticated(self, client: Any) -> None:
        """A request of the connection from `client` carried a valid token."""
        if client is not None:
            self.unauthenticated.pop(tuple(client), None)

    def admit(self, client: Any, transport: asyncio.BaseTransport) -> None:
        """Count a new connection; past the cap, close the one waiting longest."""
        while len(self.unauthenticated) >= self.max_unauthenticated:
            _oldest, waiting = self.unauthenticated.popitem(last=False)
            waiting.close()
            self.dropped += 1
            now = time.monotonic()
            if now - self._logged_at >= _LOG_EVERY_S:
                self._logged_at = now
                log.warning(
                    "connection_dropped",
                    reason="too_many_unauthenticated",
                    max_unauthenticated=self.max_unauthenticated,
                    dropped=self.dropped,
                )
        if client is not None:
            self.unauthenticated[tuple(client)] = transport

    def gone(self, client: Any) -> None:
        if client is not None:
            self.unauthenticated.pop(tuple(client), None)


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol, bounded by its class's `gate` (see the module doc)."""

    gate: ClassVar[ConnectionGate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.qdsl_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.gate.admit(self.client, transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in _RECEIVED:
            self._disarm()
        elif self.qdsl_deadline is None:  # the first byte of the next request
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.gate.gone(self.client)
        super().connection_lost(exc)

    def _arm(self) -> None:
        self.qdsl_deadline = self.loop.call_later(self.gate.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self.qdsl_deadline is not None:
            self.qdsl_deadline.cancel()
            self.qdsl_deadline = None

    def _expired(self) -> None:
        self.qdsl_deadline = None
        if self.conn.their_state in _RECEIVED or self.transport.is_closing():
            return
        peer = f"{self.client[0]}:{self.client[1]}" if self.client else None
        log.warning("request_timeout", client=peer, request_timeout_s=self.gate.request_timeout_s)
        self.transport.close()


def bounded_protocol(gate: ConnectionGate) -> type[BoundedH11]:
    """The protocol class for one server, bounded by `gate`."""
    return type("BoundedH11", (BoundedH11,), {"gate": gate})
