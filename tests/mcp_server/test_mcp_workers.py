"""The server's worker threads (`qdsl.mcp.workers`): calls one after another run
on the thread idle last, calls at once on as many threads, more than that wait
their turn in order, and a cancelled call's work ends before the call lets go.
No test asserts a duration."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from qdsl.mcp.workers import Workers


def test_calls_one_after_another_run_on_the_thread_idle_last() -> None:
    async def body() -> list[str]:
        workers = Workers(4)
        try:
            return [await workers.run(lambda: threading.current_thread().name) for _ in range(20)]
        finally:
            workers.close()

    names = asyncio.run(body())
    # a shared queue wakes the thread idle longest: four threads in turn
    assert len(set(names)) == 1, names


def _at_once(size: int, calls: int) -> tuple[list[int], list[tuple[int, str]]]:
    """`calls` calls at once on `size` workers, held until every worker is busy:
    (the order they started in, each call's result and thread)."""
    release = threading.Event()
    started: list[int] = []
    lock = threading.Lock()

    def job(i: int) -> tuple[int, str]:
        with lock:
            started.append(i)
        release.wait(60)
        return i, threading.current_thread().name

    async def body() -> list[tuple[int, str]]:
        workers = Workers(size)
        try:
            running = [asyncio.ensure_future(workers.run(lambda i=i: job(i))) for i in range(calls)]
            while len(started) < size:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            assert sorted(started) == list(range(size))  # no more than one call a thread
            release.set()
            return list(await asyncio.gather(*running))
        finally:
            workers.close()

    done = asyncio.run(body())
    return started, done


def test_calls_at_once_take_a_thread_each_and_the_rest_wait() -> None:
    started, done = _at_once(3, 7)
    assert [i for i, _ in done] == list(range(7))
    assert len({name for _, name in done}) == 3
    assert sorted(started) == list(range(7))


def test_calls_past_the_threads_wait_in_the_order_they_came() -> None:
    started, done = _at_once(1, 5)
    assert started == list(range(5))
    assert [i for i, _ in done] == list(range(5))


def test_a_cancelled_call_waits_for_its_work_and_interrupts_it() -> None:
    stop = threading.Event()
    ended = threading.Event()
    interrupts = 0

    def work() -> None:
        while not stop.is_set():
            time.sleep(0.01)
        ended.set()

    def interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        stop.set()

    async def body() -> None:
        workers = Workers(1)
        try:
            call = asyncio.ensure_future(workers.run(work, on_cancel=interrupt))
            await asyncio.sleep(0.05)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            assert ended.is_set()  # the call let go only once its work had ended
            # and the thread serves the next call
            assert await workers.run(lambda: 42) == 42
        finally:
            workers.close()

    asyncio.run(body())
    assert interrupts >= 1
