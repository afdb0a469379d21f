"""`qdsl mcp --http --workers N`: N server processes accepting on one socket.

The parent picks the port, then forks the workers before it has opened
anything else (no thread, no database connection, no event loop yet): each
worker binds its own socket to the port (SO_REUSEPORT) and opens its own pool,
ref store and event loop, and the kernel hands every new connection to one of
the workers. What the workers share lives in the database (the
PostgreSQL ref store) or in files (the tokens file, the file ref store of one
host), never in a process's memory, which is why several workers serve MCP
statelessly (`http_server.HttpOptions.stateless`).

A pre-fork of our own, not uvicorn's `workers`: that spawns fresh
interpreters from an import string, so the server's configuration (the
service's settings, the tokens file, the connection gate built around the
protocol class) would have to be re-read from the environment in each, and
the socket bound by uvicorn rather than here. Forking the configured process
keeps one code path for 1 and N workers.

The parent only supervises: SIGTERM or SIGINT is passed on to every worker
(each lets its calls in flight finish, as one server does), and when a worker
ends on its own the others are stopped too, so that a service manager sees
the server fail and restarts it whole. Workers run in their own process
group, so a terminal's Ctrl-C reaches the parent alone and each worker hears
it once, from the parent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from types import FrameType

from qdsl.mcp.logs import logger

log = logger()

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def prepare_demo() -> None:
    """The demo database, migrated and seeded by the parent before any worker
    starts: workers that each found it empty would all seed it at once, and on
    SQLite the ones waiting for the writer could give up with "database is
    locked" before serving a call."""
    from qdsl.deployment import seed_demo

    seed_demo()


def fork_workers(count: int, address: str) -> socket.socket | int:
    """Fork `count` workers listening on `address`. In a worker it returns its
    own listening socket at once (the caller goes on to serve on it); in the
    parent it returns, once every worker has ended, the server's exit code: 0
    when all stopped cleanly.

    Each worker binds a socket of its own to the port (SO_REUSEPORT), so the
    kernel spreads new connections over the workers evenly. One shared socket
    would not: the worker whose event loop wakes first accepts every
    connection waiting (asyncio accepts up to a hundred at a time), and a burst
    of a client's keep-alive connections would all land on one process."""
    from qdsl.mcp.http_server import listen, parse_address

    first = listen(address, reuse_port=True)  # picks the port when 0 was asked for
    host, _ = parse_address(address)
    port = first.getsockname()[1]
    pids: list[int] = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            own = listen(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", reuse_port=True)
            # the parent's socket is closed in every process, so no connection waits on
            # a socket nobody accepts from (those queued there meanwhile are reset)
            first.close()
            return own
        pids.append(pid)
    first.close()
    return _supervise(pids)


def _supervise(pids: list[int]) -> int:
    running = set(pids)
    stopping = False

    def stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        log.info("stopping", signal=signal.Signals(signum).name, workers=len(running))
        _signal_all(running, signal.SIGTERM)

    previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    code = 0
    try:
        while running:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if pid not in running:
                continue
            running.discard(pid)
            ended = os.waitstatus_to_exitcode(status)
            if ended != 0:
                code = code or 1
            if not stopping:
                # a worker gone on its own: the server is not whole any more
                log.warning("worker_ended", pid=pid, exit_code=ended, workers_left=len(running))
                stopping = True
                code = code or 1
                _signal_all(running, signal.SIGTERM)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    log.info("stopped", workers=len(pids), exit_code=code)
    return code


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(pid, signum)
