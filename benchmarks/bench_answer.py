"""`plan_and_answer` on the demo, against the path it replaces, and with the audit off.

1. Per demo question (tenant t1, the embedded SQLite demo, the default audit
   log on): `plan_and_answer` against what a user would otherwise run: the
   SQL an LLM would write for the question through the sqlglot guard
   (`benchmarks.sqlguard`, compiled build) plus raw sqlite3 running the
   exact statements qdsl ran for it, timed in a child process without qdsl's
   audit hook (`benchmarks.elsewhere`). The LLM's own time is left out of both.
2. The default audit log (one summary line into the state dir's file)
   against no audit (NullSink), all questions pooled; and a stage-level sink
   (every stage rendered, as `qdsl audit` tests use) for scale. The audit's
   share is a few tens of µs in milliseconds, below what whole calls on a
   shared machine resolve, so it is also measured on its own: each
   question's audit events (recorded once) replayed into a fresh `Audit`
   on the default log and on NullSink, interleaved with `plan_and_answer`
   (audit off); per repeat, (pipeline + replay on − replay off) / pipeline.

    python -m benchmarks.bench_answer [--quick] [--repeats N]
"""

from __future__ import annotations

import functools
import statistics
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir
from benchmarks.elsewhere import Child
from benchmarks.rawdb import Statement, captured, sqlite_connect, sqlite_run
from benchmarks.sqlguard import Whitelist, guard
from benchmarks.workload import demo_questions

if TYPE_CHECKING:
    from qdsl.api import AnswerOptions

TENANT = "t1"


class StageSink:
    """Renders and keeps every stage line (as a MemorySink receives them)."""

    stages = True

    def __init__(self) -> None:
        self.chars = 0

    def write(self, line: str) -> None:
        self.chars += len(line)


def alternative_calls(db: str, work: list[tuple[str, list[Statement]]]) -> Callable[[int], int]:
    """Question `i`'s LLM SQL through the guard, then its statements on raw sqlite3
    (every question for -1)."""
    from qdsl.dsl.catalog import demo_catalog

    raw = sqlite_connect(db)
    wl = Whitelist(demo_catalog())

    def one(llm_sql: str, statements: list[Statement]) -> int:
        guard(llm_sql, TENANT, wl, dialect="sqlite")
        return sqlite_run(raw, statements)

    def call(i: int) -> int:
        return sum(one(*w) for w in work) if i < 0 else one(*work[i])

    return call


def run(repeats: int, inner: int) -> tuple[list[H.Ratio], list[H.Ratio]]:
    from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
    from qdsl.audit import NullSink
    from qdsl.facts.demo import DEMO_NOW

    engine = demo_engine()
    default = AnswerOptions(now=DEMO_NOW)
    silent = AnswerOptions(now=DEMO_NOW, audit_sink=NullSink())
    staged = AnswerOptions(now=DEMO_NOW, audit_sink=StageSink())

    def answer(question: str, options: AnswerOptions = default) -> object:
        result = plan_and_answer(question, TENANT, engine=engine, options=options)
        assert result.status == "answered", (question, result.status)
        return result

    rows = []
    qdsl_calls: list[Callable[[], object]] = []
    work: list[tuple[str, list[Statement]]] = []
    for question, sql in demo_questions():
        answer(question)  # warm
        statements = captured(engine, lambda q=question: answer(q))  # type: ignore[misc]
        qdsl_calls.append(lambda q=question: answer(q))  # type: ignore[misc]
        work.append((sql(TENANT), statements))
    # the alternative runs in a child process: see benchmarks.elsewhere
    child = Child("benchmarks.bench_answer:alternative_calls", str(engine.url.database), work)
    for (question, _sql), qdsl_call, i in zip(
        demo_questions(), qdsl_calls, range(len(work)), strict=True
    ):
        alternative = functools.partial(child, i)
        rows.append(
            H.measure(
                question,
                ("plan_and_answer", qdsl_call),
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
                ("sqlglot-C guard + sqlite3", functools.partial(child, -1)),
                H.at_most(1),
                repeats=repeats,
                inner=inner,
            ),
        )
    )
    questions = [q for q, _ in demo_questions()]
    replayed = audit_replayed(questions, answer, silent, repeats * inner * 3)
    on, off, stages = H.interleaved_over(
        questions,
        [lambda q: answer(q, default), lambda q: answer(q, silent), lambda q: answer(q, staged)],
        repeats=repeats * inner * 3,
    )
    audit = H.record(
        "audit",
        H.compare(
            "plan_and_answer, default audit log vs none",
            "audit on",
            "audit off",
            on,
            off,
            goal=H.at_most(1.05),
        ),
    )
    every_stage = H.compare(
        "plan_and_answer, every stage rendered vs none",
        "stage sink",
        "audit off",
        stages,
        off,
        goal=None,
    )
    child.close()
    return rows, [audit, replayed, every_stage]


def audit_replayed(
    questions: list[str],
    answer: Callable[[str, AnswerOptions], object],
    silent: AnswerOptions,
    repeats: int,
) -> H.Ratio:
    """The audit's own work per request, as a share of the pipeline (see the module doc)."""
    from dataclasses import replace

    from qdsl.audit import Audit, MemorySink, NullSink

    header = ("timestamp", "event", "trace_id", "stage")
    events: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for q in questions:
        memory = MemorySink()
        answer(q, replace(silent, audit_sink=memory))
        events[q] = [
            (e["stage"], {k: v for k, v in e.items() if k not in header}) for e in memory.events
        ]
    null = NullSink()

    def replay(question: str, sink: NullSink | None) -> None:
        audit = Audit("0" * 32, sink)  # None: the default log, found as a request finds it
        audit.begin(TENANT, question)
        for stage, fields in events[question]:
            audit.event(stage, **fields)

    on, off, whole = H.interleaved_over(
        questions,
        [lambda q: replay(q, None), lambda q: replay(q, null), lambda q: answer(q, silent)],
        repeats=repeats,
    )
    p50 = statistics.median
    per_repeat = [
        (p50(w) + p50(a) - p50(b)) / p50(w)
        for a, b, w in zip(on.repeats, off.repeats, whole.repeats, strict=True)
    ]
    added = p50(on.all) - p50(off.all)
    pipeline_s = p50(whole.all)
    return H.Ratio(
        "plan_and_answer, the audit's own work (replayed) added to the pipeline",
        "pipeline + audit",
        "pipeline",
        pipeline_s + added,
        pipeline_s,
        (pipeline_s + added) / pipeline_s,
        min(per_repeat),
        max(per_repeat),
        H.at_most(1.05),
    )


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
