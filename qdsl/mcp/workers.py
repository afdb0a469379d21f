"""The server's worker threads: blocking work (a SQLite call, planning, the ref
store) handed off the event loop and its result handed back.

A hand-off is on every call's path, so it is kept to what it must do: one
put to wake a waiting worker, one `call_soon_threadsafe` back, and the
caller awaits a plain asyncio future (no `concurrent.futures.Future`, no
`asyncio.shield` layer: each of those costs an event-loop turn or a lock per
call). A caller that is cancelled (the client cancelled the call, or its time
ran out) waits for its work to end before it lets go, so the work never
outlives the call's slot; `on_cancel` is called meanwhile, repeatedly, to
make it end sooner (e.g. interrupt its SQLite statement).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio

T = TypeVar("T")

# How often a cancelled call's `on_cancel` is repeated while its work runs on:
# a statement started after the previous attempt is stopped by the next.
_RETRY_S = 0.05


class _Job(Generic[T]):
    __slots__ = ("context", "ended", "fn", "future", "loop", "waiter")

    def __init__(self, fn: Callable[[], T], loop: asyncio.AbstractEventLoop) -> None:
        self.fn, self.loop = fn, loop
        self.context = contextvars.copy_context()
        self.future: asyncio.Future[T] = loop.create_future()
        self.ended = False
        self.waiter: asyncio.Future[None] | None = None

    def run(self) -> tuple[Any, BaseException | None]:
        try:
            return self.context.run(self.fn), None
        except BaseException as exc:  # handed to the caller, raised there
            return None, exc

    def deliver(self, outcome: tuple[Any, BaseException | None]) -> None:
        self.loop.call_soon_threadsafe(self._end, *outcome)

    def _end(self, value: Any, exc: BaseException | None) -> None:
        self.ended = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)
        if self.future.cancelled():
            return
        if exc is not None:
            self.future.set_exception(exc)
        else:
            self.future.set_result(value)


Inbox = queue.SimpleQueue["_Job[Any] | None"]


class Workers:
    """`size` daemon threads, each waiting on its own inbox.

    A job goes to the worker that became idle last: calls one after another
    (a host's usual pace) run on one thread whose stack, caches and core are
    still warm, instead of each waking the thread idle longest (a shared
    queue's order). That measured about 0.05x of `ask`'s time over MCP.
    With every worker busy, jobs wait in a backlog, taken in order."""

    def __init__(self, size: int, name: str = "qdsl-worker") -> None:
        self._lock = threading.Lock()
        self._idle: list[Inbox] = []  # last in, first out
        self._backlog: collections.deque[_Job[Any]] = collections.deque()
        self._closed = False
        self._threads = []
        for i in range(max(size, 1)):
            inbox: Inbox = queue.SimpleQueue()
            self._idle.append(inbox)
            self._threads.append(
                threading.Thread(target=self._serve, args=(inbox,), name=f"{name}-{i}", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    def _serve(self, inbox: Inbox) -> None:
        job = inbox.get()
        while job is not None:
            outcome = job.run()
            # idle again before the caller hears of it: its next job comes here
            with self._lock:
                following = self._backlog.popleft() if self._backlog else None
                if following is None and not self._closed:
                    self._idle.append(inbox)
            job.deliver(outcome)
            if following is None and self._closed:
                return
            job = following if following is not None else inbox.get()

    def _submit(self, job: _Job[Any]) -> None:
        with self._lock:
            if not self._idle:
                self._backlog.append(job)
                return
            inbox = self._idle.pop()
        inbox.put(job)

    async def run(self, fn: Callable[[], T], on_cancel: Callable[[], None] | None = None) -> T:
        """`fn()` in a worker thread, in a copy of the caller's context."""
        job = _Job(fn, asyncio.get_running_loop())
        self._submit(job)
        try:
            return await job.future
        except BaseException:
            if not job.ended:
                await _wait_out(job, on_cancel)
            raise

    def close(self) -> None:
        """Let the workers go once the jobs queued are done (they are daemons:
        a job still running does not hold the process)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)


async def _wait_out(job: _Job[Any], on_cancel: Callable[[], None] | None) -> None:
    job.waiter = job.loop.create_future()
    with anyio.CancelScope(shield=True):
        while not job.ended:
            if on_cancel is not None:
                on_cancel()
            await asyncio.wait([job.waiter], timeout=_RETRY_S if on_cancel else None)
