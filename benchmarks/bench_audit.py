"""What the default audit log costs `plan_and_answer` (issue 10 item 8).

    .venv/bin/python -m benchmarks.bench_audit [--quick]

The same questions answered over the embedded SQLite demo, side by side in one
run: with the audit off (NullSink), with the default sink (one summary line
into the state dir's rotating file), and with a stage-level sink (every stage
rendered, as a MemorySink receives it). Prints medians per question and the
ratio to the audit-off run. Uses a temp state dir.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

QUESTIONS = (
    "帮我看看系统里面有没有 A 股项目",
    "有多少个进行中的项目",
    "项目 64 现在什么状态",
    "确认",
)


class _StageSink:
    """Renders and keeps every stage line (like MemorySink, without parsing them back)."""

    stages = True

    def __init__(self) -> None:
        self.count = 0

    def write(self, line: str) -> None:
        self.count += len(line)


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def _audit_alone_us(sink: object, repeat: int) -> float:
    """One request's audit calls as the pipeline makes them, without the pipeline."""
    import uuid

    from qdsl.audit import Audit

    def request() -> None:
        audit = Audit(uuid.uuid4().hex, sink)  # type: ignore[arg-type]
        audit.begin("t1", "有多少个进行中的项目")
        audit.event("request", route_mode="internal", language="zh", question_chars=10)
        audit.event("gate", status="passed", kind=None)
        audit.event("plan", plan_hash="0123456789abcdef", query_type="count",
                    entity_type="project", filter_fields=["status"], operators=["equals"],
                    filter_count=1, planner="rule", attempts=1, warnings=0, elapsed_ms=1.0)
        audit.event("execute", template="project.count", sql_fingerprints=["a1", "b2"],
                    execution_id="e", row_count=1, evidence_count=0, count_present=True,
                    baseline_present=True, retrieval="facts_first", used_fallback=False,
                    elapsed_ms=1.0, attempt=1)
        audit.event("verify", outcome="pass", failed=[], checks_run=["a", "b", "c"],
                    elapsed_ms=0.5)
        audit.event("result", status="answered", query_type="count",
                    answer_contract="count_scalar", outcome="pass", failed=[],
                    evidence_count=0, elapsed_ms=3.0)

    return _median_ms(lambda: [request() for _ in range(20)], max(3, repeat // 20)) * 50


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    repeat = 15 if quick else 60
    with tempfile.TemporaryDirectory() as state:
        os.environ["QDSL_STATE_DIR"] = state
        from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
        from qdsl.audit import NullSink, default_sink
        from qdsl.facts.demo import DEMO_NOW

        engine = demo_engine()
        print("| question | audit off ms | default (file) ms | ratio | stages ms | ratio |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        ratios = []
        for q in QUESTIONS:
            def run(sink: object, q: str = q) -> object:
                options = AnswerOptions(now=DEMO_NOW, audit_sink=sink)  # type: ignore[arg-type]
                return plan_and_answer(q, "t1", engine=engine, options=options)

            run(NullSink())  # warm caches
            # interleaved, so drift in machine load hits all three alike
            off, on, stages = [], [], []
            for _ in range(3):
                off.append(_median_ms(lambda: run(NullSink()), repeat // 3))
                on.append(_median_ms(lambda: run(default_sink()), repeat // 3))
                stages.append(_median_ms(lambda: run(_StageSink()), repeat // 3))
            o, d, s = statistics.median(off), statistics.median(on), statistics.median(stages)
            ratios.append(d / o)
            print(f"| {q} | {o:.2f} | {d:.2f} | {d / o:.3f} | {s:.2f} | {s / o:.3f} |")
        overall = statistics.median(ratios)
        print(f"\ndefault audit / audit off, median over questions: {overall:.3f}")
        per_request = _audit_alone_us(default_sink(), repeat * 20)
        print(f"the audit alone (6 stage events + one summary line to the file): "
              f"{per_request:.1f} µs per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
