"""Callers queued first come, first served for an engine's connections.

SQLAlchemy's QueuePool lets a thread that just gave a connection back take it
again before the waiter it woke gets to run, and the waiter then waits anew at
the end of the line. With more callers than connections (64 threads on 16
connections, no pause between calls) some callers lost over and over: their
p95 was 2.1 s where a first-come queue in front of the same pool held it to
0.8 s (and the pool's own 30 s timeout could strike a caller that was only
ever unlucky). `make_engine` records how many connections its pool may hand
out; the executor's sessions take a turn here before they check one out, so
the pool itself never has a waiter. Each turn is handed to the longest waiter
directly (no barging); a caller that waited the pool's timeout gets
SQLAlchemy's own TimeoutError, as the pool would have raised.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine
from sqlalchemy.pool import QueuePool

# SQLAlchemy's documented default for create_engine's max_overflow (the pool
# itself reports its size and timeout, but not this)
DEFAULT_MAX_OVERFLOW = 10


class FairTurns:
    """At most `capacity` holders; the others wait in arrival order."""

    def __init__(self, capacity: int, timeout: float) -> None:
        self.capacity = capacity
        self.timeout = timeout
        self._lock = threading.Lock()
        self._free = capacity
        self._waiting: deque[threading.Event] = deque()

    @property
    def waiting(self) -> int:
        """How many callers wait for a turn."""
        with self._lock:
            return len(self._waiting)

    def acquire(self) -> None:
        with self._lock:
            if self._free > 0 and not self._waiting:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(self.timeout):
            return
        with self._lock:
            if turn.is_set():  # handed over as the wait ended
                return
            self._waiting.remove(turn)
        raise sa_exc.TimeoutError(
            f"no connection free after {self.timeout:g} s: {self.capacity} in use by other callers"
        )

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the turn passes on, never freed
            else:
                self._free += 1


_TURNS: weakref.WeakKeyDictionary[Engine, FairTurns] = weakref.WeakKeyDictionary()


def record(engine: Engine, max_overflow: int) -> None:
    """Queue the engine's callers fairly, if its pool holds a bounded number
    of connections (a QueuePool with a finite overflow)."""
    pool = engine.pool
    if isinstance(pool, QueuePool) and max_overflow >= 0:
        _TURNS[engine] = FairTurns(pool.size() + max_overflow, pool.timeout())


@contextmanager
def turn(engine: Engine) -> Iterator[None]:
    """A turn at the engine's connections (no wait for engines not recorded)."""
    found = _TURNS.get(engine)
    if found is None:
        yield
        return
    found.acquire()
    try:
        yield
    finally:
        found.release()
