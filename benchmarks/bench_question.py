"""Question accounting's cost against the pipeline it sits in.

Per demo question (tenant t1, the embedded SQLite demo): the accounting (the
`read_question` the planner and the verifier share, plus the
`question_covered` check over the executed plan) against the whole
`plan_and_answer` on the same question (which runs both), interleaved. The
goal holds accounting to at most the rest of the pipeline: accounting ≤ whole
− accounting, that is accounting / whole ≤ 0.5×. Questions the pipeline does
not answer have no executed plan to check; their accounting is the reading.

    python -m benchmarks.bench_question [--quick] [--repeats N]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir

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
TENANT = "t1"
GOAL = H.at_most(0.5)


def run(repeats: int, inner: int) -> list[H.Ratio]:
    from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
    from qdsl.dsl.catalog import demo_catalog
    from qdsl.dsl.question import read_question
    from qdsl.executor.run import execute
    from qdsl.facts.demo import DEMO_NOW
    from qdsl.render import render
    from qdsl.verifier import Subject, VerifyContext
    from qdsl.verifier.checks.question import question_covered

    catalog = demo_catalog()
    engine = demo_engine()
    options = AnswerOptions(now=DEMO_NOW)

    def whole(question: str) -> object:
        return plan_and_answer(question, TENANT, engine=engine, options=options)

    def accounting_of(question: str) -> Callable[[], object]:
        res = plan_and_answer(question, TENANT, engine=engine, options=options)
        if res.plan is None or res.status != "answered":
            return lambda: read_question(question, catalog, now=DEMO_NOW)
        plan = res.plan
        result = execute(plan, catalog, engine, TENANT, now=DEMO_NOW)
        answer = render(plan, result, language=res.language, catalog=catalog)

        def accounting() -> object:
            reading = read_question(question, catalog, now=DEMO_NOW)
            ctx = VerifyContext(tenant_id=TENANT, now=DEMO_NOW, catalog=catalog, question=reading)
            subject = Subject(plan=plan, result=result, answer=answer, context=ctx)
            return list(question_covered(subject))

        return accounting

    accountings = {q: accounting_of(q) for q in QUESTIONS}
    rows = [
        H.measure(
            q,
            ("read + check", accountings[q]),
            ("plan_and_answer", lambda q=q: whole(q)),  # type: ignore[misc]
            GOAL,
            repeats=repeats,
            inner=inner,
        )
        for q in QUESTIONS
    ]
    a, b = H.interleaved_over(
        QUESTIONS, [lambda q: accountings[q](), whole], repeats=repeats * inner
    )
    rows.append(
        H.compare(
            f"all {len(QUESTIONS)} questions, pooled",
            "read + check",
            "plan_and_answer",
            a,
            b,
            goal=GOAL,
        )
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_question", __doc__)
    parser.add_argument("--repeats", type=int, default=10)
    args, _ = parser.parse_known_args(argv)
    repeats, inner = (2, 1) if args.quick else (args.repeats, 5)
    with state_dir():
        rows = run(repeats, inner)
    H.print_ratios(
        "Question accounting (read + coverage check) vs the whole plan_and_answer",
        rows,
        "goal: accounting at most the rest of the pipeline (accounting / whole ≤ 0.5×)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
