"""Question accounting's cost per question, beside the rest of plan_and_answer.

For each demo question: the median time of `read_question` (the reading the
planner and the verifier share), of the `question_covered` check over the
executed plan, and of the whole `plan_and_answer` on the embedded SQLite demo
(which includes both). The rest of the pipeline is the whole minus the two.
Accounting must not double the pipeline: the goal is a median of (read +
check) at most the median of the rest (printed as met or not; nothing fails
on time).

    python -m benchmarks.bench_question [--quick] [--reps N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.question import read_question
from qdsl.executor.run import execute
from qdsl.facts.demo import DEMO_NOW
from qdsl.render import render
from qdsl.verifier import Subject, VerifyContext
from qdsl.verifier.checks.question import question_covered

QUESTIONS = (
    "帮我看看系统里面有没有 A 股项目",
    "Are there any A-share projects?",
    "有多少个进行中的项目",
    "How many paused projects do we have?",
    "有几个任务还没完成",
    "列出所有暂停的项目",
    "Which tasks are assigned to project 64?",
    "项目 64 现在什么状态",
    "2026年创建了多少个项目",
    "预算超过 20 万的项目有哪些",
    "Which project has the largest budget?",
    "有多少个欧洲项目",
    "当前系统架构是什么",
    "项目 64 和 65 有什么区别",
)


_OPTIONS = AnswerOptions(now=DEMO_NOW)


def _median_us(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def measure(question: str, reps: int) -> tuple[float, float, float]:
    catalog = demo_catalog()
    engine = demo_engine()
    read_us = _median_us(lambda: read_question(question, catalog, now=DEMO_NOW), reps)
    whole_us = _median_us(
        lambda: plan_and_answer(question, "t1", engine=engine, options=_OPTIONS), max(reps // 10, 3)
    )
    res = plan_and_answer(question, "t1", engine=engine, options=_OPTIONS)
    check_us = 0.0
    if res.plan is not None and res.status == "answered":
        plan = res.plan
        result = execute(plan, catalog, engine, "t1", now=DEMO_NOW)
        answer = render(plan, result, language=res.language, catalog=catalog)
        reading = read_question(question, catalog, now=DEMO_NOW)
        ctx = VerifyContext(tenant_id="t1", now=DEMO_NOW, catalog=catalog, question=reading)
        subject = Subject(plan=plan, result=result, answer=answer, context=ctx)
        check_us = _median_us(lambda: list(question_covered(subject)), reps)
    return read_us, check_us, whole_us


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_question", description=__doc__)
    parser.add_argument("--reps", type=int, default=100, help="timed passes per question")
    parser.add_argument("--quick", action="store_true", help="3 passes per question")
    args, _ = parser.parse_known_args(argv)
    if args.quick:
        args.reps = 3
    plan_and_answer(QUESTIONS[0], "t1", engine=demo_engine(), options=_OPTIONS)  # warm caches
    print(f"{len(QUESTIONS)} questions, {args.reps} passes; median µs per question")
    print(f"{'question':<40} {'read':>8} {'check':>8} {'pipeline':>10} {'share':>7}")
    reads, checks, wholes, rests = [], [], [], []
    for q in QUESTIONS:
        read_us, check_us, whole_us = measure(q, args.reps)
        reads.append(read_us)
        checks.append(check_us)
        wholes.append(whole_us)
        rests.append(max(whole_us - read_us - check_us, 0.0))
        share = (read_us + check_us) / whole_us
        print(f"{q[:40]:<40} {read_us:>8.0f} {check_us:>8.0f} {whole_us:>10.0f} {share:>7.1%}")
    accounting = statistics.median(r + c for r, c in zip(reads, checks, strict=True))
    rest = statistics.median(rests)
    print(
        f"median: read {statistics.median(reads):.0f} µs, check {statistics.median(checks):.0f}"
        f" µs, pipeline {statistics.median(wholes):.0f} µs; accounting / rest of the pipeline"
        f" = {accounting / rest:.2f} (goal ≤ 1: {'met' if accounting <= rest else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
