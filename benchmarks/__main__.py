"""Run every benchmark, then print the summary of issue 12's table.

    python -m benchmarks [--quick] [--only NAME[,NAME...]] [options passed on]

Each `benchmarks/bench_*.py` runs through its `main(argv)` in this process, in
the order below, then any other `bench_*.py` found beside them; the options
go to every benchmark (each takes `--quick` and ignores what it does not
know). A temporary QDSL_STATE_DIR holds the demo database and the refs. A
benchmark that raises is reported and the others still run; the exit status
is then 1. `--quick` runs everything at tiny sizes: it proves the benchmarks
run (tests/test_benchmarks_quick.py), its numbers mean nothing.
"""

from __future__ import annotations

import importlib
import signal
import sys
import traceback
from pathlib import Path

from benchmarks import harness

ORDER = (
    "bench_compile",
    "bench_executor",
    "bench_answer",
    "bench_startup",
    "bench_envelope",
    "bench_question",
    "bench_values",
    "bench_llm_prompt",
    "bench_facts_load",
    "bench_mcp",
    "bench_analytics",
)


def names() -> list[str]:
    found = {p.stem for p in Path(__file__).parent.glob("bench_*.py")}
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


def _only(argv: list[str]) -> tuple[list[str], set[str] | None]:
    if "--only" not in argv:
        return argv, None
    i = argv.index("--only")
    chosen = {n if n.startswith("bench_") else f"bench_{n}" for n in argv[i + 1].split(",")}
    return argv[:i] + argv[i + 2 :], chosen


def main(argv: list[str] | None = None) -> int:
    from benchmarks.bench_executor import state_dir

    args, chosen = _only(list(argv or []))
    # a terminated run still drops its throwaway databases (the `finally` blocks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    failed = []
    with state_dir():
        for name in names():
            if chosen is not None and name not in chosen:
                continue
            print(f"\n## {name}", flush=True)
            try:
                module = importlib.import_module(f"benchmarks.{name}")
                status = int(module.main(list(args)) or 0)
            except Exception:
                traceback.print_exc()
                status = 1
            if status:
                failed.append(name)
    harness.print_summary()
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
