"""Sync and async completions: detected, awaited on the loop or threaded off it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import Engine

from qdsl.api import AnswerOptions, aplan_and_answer, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.db import make_async_engine
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, RulePlanner
from qdsl.planner.llm import is_async_callable

CATALOG = demo_catalog()
QUESTION = "现在有多少个进行中的项目"
GOOD = RulePlanner().plan(QUESTION, catalog=CATALOG).text


class AsyncScript:
    """An async completion that sleeps, counting how many sleep at once."""

    def __init__(self, reply: str, delay: float) -> None:
        self.reply, self.delay = reply, delay
        self.in_flight = self.peak = self.calls = 0
        self.first_start: float | None = None
        self.last_end = 0.0

    async def __call__(self, prompt: str) -> str:
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.first_start is None:
            self.first_start = time.perf_counter()
        await asyncio.sleep(self.delay)
        self.in_flight -= 1
        self.last_end = time.perf_counter()
        return self.reply


def test_detection_needs_no_configuration() -> None:
    async def acomplete(prompt: str) -> str:
        return prompt

    assert is_async_callable(acomplete) and is_async_callable(AsyncScript("", 0))
    assert not is_async_callable(lambda prompt: prompt)
    assert LLMPlanner(acomplete).is_async and not LLMPlanner(str.strip).is_async


def test_an_async_completion_works_in_the_sync_twin(sqlite_engine: Engine) -> None:
    script = AsyncScript(GOOD, 0.0)
    res = plan_and_answer(
        QUESTION,
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=LLMPlanner(script), now=DEMO_NOW),
    )
    assert res.status == "answered" and res.planner == "llm" and script.calls == 1


def test_two_hundred_async_completions_overlap(sqlite_url: str) -> None:
    n, delay = 200, 0.05
    script = AsyncScript(GOOD, delay)
    options = AnswerOptions(planner=LLMPlanner(script), now=DEMO_NOW)

    async def go() -> list[Any]:
        aengine = make_async_engine(sqlite_url)
        try:
            calls = [aplan_and_answer(QUESTION, "t1", engine=aengine, options=options)]
            calls += [
                aplan_and_answer(QUESTION, "t1", engine=aengine, options=options)
                for _ in range(n - 1)
            ]
            return await asyncio.wait_for(asyncio.gather(*calls), timeout=120)
        finally:
            await aengine.dispose()

    results = asyncio.run(go())
    assert all(r.status == "answered" for r in results)
    assert script.calls == n
    # The completions were awaited side by side, not one after another.
    assert script.peak > n // 2
    assert script.first_start is not None
    assert script.last_end - script.first_start < 0.5 * n * delay


def test_a_blocking_sync_completion_does_not_stall_the_loop(sqlite_url: str) -> None:
    block = 1.0

    def slow(prompt: str) -> str:
        time.sleep(block)  # a blocking HTTP client, say
        return GOOD

    async def go() -> tuple[Any, float]:
        aengine = make_async_engine(sqlite_url)
        gaps: list[float] = []
        stop = asyncio.Event()

        async def ticker() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        try:
            res = await aplan_and_answer(
                QUESTION,
                "t1",
                engine=aengine,
                options=AnswerOptions(planner=LLMPlanner(slow), now=DEMO_NOW),
            )
        finally:
            stop.set()
            await tick
            await aengine.dispose()
        return res, max(gaps)

    res, worst = asyncio.run(go())
    assert res.status == "answered"
    # The loop kept ticking while the completion blocked its worker thread.
    assert worst < block / 2


def test_a_custom_sync_planner_runs_off_the_loop(sqlite_url: str) -> None:
    """Any planner without `aplan` is run in a worker thread by the async twin."""
    import threading

    seen: list[str] = []

    class Threaded:
        name = "threaded"

        def plan(self, question: str, **kw: Any) -> Any:
            seen.append(threading.current_thread().name)
            return RulePlanner().plan(question, **kw)

    async def go() -> Any:
        aengine = make_async_engine(sqlite_url)
        try:
            return await aplan_and_answer(
                QUESTION,
                "t1",
                engine=aengine,
                options=AnswerOptions(planner=Threaded(), now=DEMO_NOW),
            )
        finally:
            await aengine.dispose()

    res = asyncio.run(go())
    assert res.status == "answered" and seen and seen[0] != threading.main_thread().name
