"""`plan_and_answer` on the demo, against the path it replaces, and with the audit off.

1. Per demo question (tenant t1, the embedded SQLite demo, the default audit
   log on): `plan_and_answer` against what a user would otherwise run: the
   SQL an LLM would write for the question through the sqlglot guard
   (`benchmarks.sqlguard`, compiled build) plus raw sqlite3 running the
   exact statements qdsl ran for it. The LLM's own time is left out of both.
2. The default audit log (one summary line into the state dir's file)
   against no audit (NullSink), all questions pooled; and a stage-level sink
   (every stage rendered, as `qdsl audit` tests use) for scale.

    python -m benchmarks.bench_answer [--quick] [--repeats N]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir
from benchmarks.rawdb import captured, sqlite_connect, sqlite_run
from benchmarks.sqlguard import Whitelist, guard
from benchmarks.workload import demo_questions

TENANT = "t1"


class StageSink:
    """Renders and keeps every stage line (as a MemorySink receives them)."""

    stages = True

    def __init__(self) -> None:
        self.chars = 0

    def write(self, line: str) -> None:
        self.chars += len(line)


def run(repeats: int, inner: int) -> tuple[list[H.Ratio], list[H.Ratio]]:
    from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
    from qdsl.audit import NullSink
    from qdsl.dsl.catalog import demo_catalog
    from qdsl.facts.demo import DEMO_NOW

    engine = demo_engine()
    raw = sqlite_connect(str(engine.url.database))
    wl = Whitelist(demo_catalog())
    default = AnswerOptions(now=DEMO_NOW)
    silent = AnswerOptions(now=DEMO_NOW, audit_sink=NullSink())
    staged = AnswerOptions(now=DEMO_NOW, audit_sink=StageSink())

    def answer(question: str, options: AnswerOptions = default) -> object:
        result = plan_and_answer(question, TENANT, engine=engine, options=options)
        assert result.status == "answered", (question, result.status)
        return result

    rows = []
    qdsl_calls: list[Callable[[], object]] = []
    alt_calls: list[Callable[[], object]] = []
    for question, sql in demo_questions():
        answer(question)  # warm
        statements = captured(engine, lambda q=question: answer(q))  # type: ignore[misc]
        llm_sql = sql(TENANT)

        def alternative(s: str = llm_sql, st: list[tuple[str, object]] = statements) -> int:
            guard(s, TENANT, wl, dialect="sqlite")
            return sqlite_run(raw, st)

        qdsl_calls.append(lambda q=question: answer(q))  # type: ignore[misc]
        alt_calls.append(alternative)
        rows.append(
            H.measure(
                question,
                ("plan_and_answer", qdsl_calls[-1]),
                ("guard + sqlite3", alternative),
                H.at_most(1),
                repeats=repeats,
                inner=inner,
            )
        )
    rows.append(
        H.record(
            "plan_and_answer",
            H.measure(
                f"plan_and_answer on the demo ({len(qdsl_calls)} questions per call)",
                ("plan_and_answer", lambda: [f() for f in qdsl_calls]),
                ("sqlglot-C guard + sqlite3", lambda: [f() for f in alt_calls]),
                H.at_most(1),
                repeats=repeats,
                inner=inner,
            ),
        )
    )
    questions = [q for q, _ in demo_questions()]
    on, off, stages = H.interleaved_over(
        questions,
        [lambda q: answer(q, default), lambda q: answer(q, silent), lambda q: answer(q, staged)],
        repeats=repeats * inner,
    )
    audit = H.record(
        "audit",
        H.compare(
            "plan_and_answer, default audit log vs none", "audit on", "audit off", on, off,
            goal=H.at_most(1.05),
        ),
    )
    every_stage = H.compare(
        "plan_and_answer, every stage rendered vs none", "stage sink", "audit off", stages, off,
        goal=None,
    )
    raw.close()
    return rows, [audit, every_stage]


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_answer", __doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args, _ = parser.parse_known_args(argv)
    repeats, inner = (2, 2) if args.quick else (args.repeats, 10)
    with state_dir():
        rows, audit = run(repeats, inner)
    H.print_ratios("plan_and_answer vs LLM SQL + sqlglot guard + raw sqlite3", rows)
    H.print_ratios("The audit log's cost", audit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
