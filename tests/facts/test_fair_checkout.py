"""Callers take turns at an engine's connections in arrival order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import NullPool

from qdsl.facts.db import make_engine
from qdsl.facts.fair_checkout import FairTurns, turn


def _wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def test_turns_are_handed_on_in_arrival_order() -> None:
    turns = FairTurns(1, timeout=60)
    turns.acquire()
    order: list[int] = []

    def caller(i: int) -> None:
        turns.acquire()
        order.append(i)
        turns.release()

    threads = []
    for i in range(5):
        t = threading.Thread(target=caller, args=(i,))
        t.start()
        threads.append(t)
        # the next caller arrives only once this one is queued
        _wait_until(lambda n=i: turns.waiting == n + 1, "queued")
    turns.release()
    for t in threads:
        t.join(timeout=60)
    assert order == [0, 1, 2, 3, 4]


def test_no_more_holders_than_the_capacity() -> None:
    turns = FairTurns(3, timeout=60)
    held, most = [0], [0]
    lock = threading.Lock()

    def caller() -> None:
        for _ in range(50):
            turns.acquire()
            with lock:
                held[0] += 1
                most[0] = max(most[0], held[0])
            time.sleep(0)
            with lock:
                held[0] -= 1
            turns.release()

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert most[0] == 3 and held[0] == 0


def test_a_caller_that_waited_too_long_gets_the_pools_timeout_and_leaves_the_line() -> None:
    turns = FairTurns(1, timeout=0.05)
    turns.acquire()
    with pytest.raises(sa_exc.TimeoutError, match="no connection free"):
        turns.acquire()
    turns.release()
    turns.acquire()  # the line is empty again: the turn is free at once
    turns.release()


def test_make_engine_records_its_pool_and_overflow(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    engine = make_engine(url, pool_size=2, max_overflow=1, pool_timeout=0.05)
    try:
        with ExitStack() as stack:
            for _ in range(3):  # pool_size + max_overflow
                stack.enter_context(turn(engine))
            with pytest.raises(sa_exc.TimeoutError):
                stack.enter_context(turn(engine))
    finally:
        engine.dispose()


def test_an_unbounded_pool_is_not_queued(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    unbounded: list[dict[str, Any]] = [
        {"poolclass": NullPool},
        {"pool_size": 1, "max_overflow": -1, "pool_timeout": 0.05},
    ]
    for kwargs in unbounded:
        engine = make_engine(url, **kwargs)
        try:
            with ExitStack() as stack:
                for _ in range(20):  # more than any recorded capacity would allow
                    stack.enter_context(turn(engine))
        finally:
            engine.dispose()
