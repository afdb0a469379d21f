"""The cyclic garbage collector held off while a large result is built.

Building the result of a 10,000-row list makes some 100,000 objects (rows,
evidence, their dicts and tuples), none in a reference cycle: reference
counting frees them all. Left on, the collector runs its full collections
over every object of the process meanwhile (the imported libraries' too),
which took more time than the validation it interrupted (170–250 ms against
98 ms with the collector held off, measured on that list). So a build of at
least `LARGE_ROWS` rows holds it off, and it runs again once no such build
is in progress on any thread (the collector is per process: a call cannot
turn it back on under another still building).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LARGE_ROWS = 1_000


class _Hold:
    """How many large builds are in progress, and whether the collector was on
    before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.building = 0
        self.was_enabled = False

    def enter(self) -> None:
        with self.lock:
            if self.building == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.building += 1

    def leave(self) -> None:
        with self.lock:
            self.building -= 1
            if self.building == 0 and self.was_enabled:
                gc.enable()


_HOLD = _Hold()


@contextmanager
def collector_held(rows: int) -> Iterator[None]:
    """Hold the collector off for a build of `rows` rows, if it is large."""
    if rows < LARGE_ROWS:
        yield
        return
    _HOLD.enter()
    try:
        yield
    finally:
        _HOLD.leave()
