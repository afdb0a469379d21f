"""One way to time, compare and report, shared by every benchmark.

A comparison runs qdsl's path (A) and the alternative (B) in the same process
on the same inputs, interleaved: each repeat runs both, in alternating order
(A then B, then B then A), so warm buffers, caches and background load favour
neither. Every call is timed on its own. The ratio is a statistic (median or
p95) of all A times over the same statistic of all B times; its spread is the
lowest and highest per-repeat ratio. Each row names the goal it is held to
(issue 12's table) and whether the ratio meets it; nothing fails on time.

Ratios read as written in the goal: "≤ 1.5×" rows print qdsl's time as a
multiple of the alternative's (lower is better), "≥ 15× faster" rows print the
alternative's time as a multiple of qdsl's (higher is better).

`record` keeps the rows of issue 12's table for the summary that
`python -m benchmarks` prints at the end.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

Stat = Literal["p50", "p95"]
T = TypeVar("T")


@dataclass(frozen=True)
class Goal:
    """`at_most`: qdsl time / alternative time ≤ factor; `faster`: alternative / qdsl ≥ factor."""

    kind: Literal["at_most", "faster"]
    factor: float

    def reading(self, a: float, b: float) -> float:
        return a / b if self.kind == "at_most" else b / a

    def met(self, value: float) -> bool:
        return value <= self.factor if self.kind == "at_most" else value >= self.factor

    def __str__(self) -> str:
        return f"≤ {self.factor:g}×" if self.kind == "at_most" else f"≥ {self.factor:g}× faster"



def rotation(shift: int, n: int) -> list[int]:
    """The order n variants run in for one item of one repeat: rotated by
    `shift` and reversed on odd shifts, so no variant always runs first or
    right after the same neighbour (warm caches favour whoever runs second)."""
    order = [(shift + k) % n for k in range(n)]
    if shift % 2:
        order.reverse()
    return order

def at_most(factor: float) -> Goal:
    return Goal("at_most", factor)


def faster(factor: float) -> Goal:
    return Goal("faster", factor)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def stat(values: Sequence[float], which: Stat) -> float:
    return statistics.median(values) if which == "p50" else percentile(values, 0.95)


@dataclass
class Samples:
    """Per repeat, the seconds of each call."""

    repeats: list[list[float]] = field(default_factory=list)

    @property
    def all(self) -> list[float]:
        return [t for rep in self.repeats for t in rep]


def interleaved(
    variants: Sequence[Callable[[], object]],
    *,
    repeats: int,
    inner: int = 1,
    warmup: int = 1,
) -> list[Samples]:
    """Time every variant `inner` calls per repeat, the order rotated each repeat."""
    for fn in variants:
        for _ in range(warmup):
            fn()
    out = [Samples() for _ in variants]
    n = len(variants)
    for r in range(repeats):
        order = [(r + k) % n for k in range(n)] if r % 2 == 0 else [(r - k) % n for k in range(n)]
        for index in order:
            fn = variants[index]
            times = []
            for _ in range(inner):
                t0 = time.perf_counter_ns()
                fn()
                times.append((time.perf_counter_ns() - t0) / 1e9)
            out[index].repeats.append(times)
    return out


def interleaved_over(
    items: Sequence[T],
    variants: Sequence[Callable[[T], object]],
    *,
    repeats: int,
    warmup: int = 1,
) -> list[Samples]:
    """Per repeat, every item once through every variant, the order rotated per item."""
    for item in items:
        for fn in variants:
            for _ in range(warmup):
                fn(item)
    out = [Samples() for _ in variants]
    n = len(variants)
    for r in range(repeats):
        for sample in out:
            sample.repeats.append([])
        for i, item in enumerate(items):
            for index in rotation(r + i, n):
                t0 = time.perf_counter_ns()
                variants[index](item)
                out[index].repeats[-1].append((time.perf_counter_ns() - t0) / 1e9)
    return out


@dataclass(frozen=True)
class Ratio:
    """qdsl (A) against the alternative (B): times, the ratio and its spread, the goal."""

    path: str
    qdsl: str
    alternative: str
    a: float  # seconds, the statistic over every call
    b: float
    value: float  # as the goal reads it
    low: float
    high: float
    goal: Goal | None
    which: Stat = "p50"

    @property
    def met(self) -> bool | None:
        return None if self.goal is None else self.goal.met(self.value)


def compare(
    path: str,
    qdsl: str,
    alternative: str,
    a: Samples,
    b: Samples,
    *,
    goal: Goal | None,
    which: Stat = "p50",
) -> Ratio:
    reading = goal.reading if goal is not None else (lambda x, y: x / y)
    per_repeat = [
        reading(stat(ra, which), stat(rb, which))
        for ra, rb in zip(a.repeats, b.repeats, strict=True)
        if ra and rb
    ]
    sa, sb = stat(a.all, which), stat(b.all, which)
    return Ratio(
        path, qdsl, alternative, sa, sb, reading(sa, sb), min(per_repeat), max(per_repeat),
        goal, which,
    )


def measure(
    path: str,
    qdsl: tuple[str, Callable[[], object]],
    alternative: tuple[str, Callable[[], object]],
    goal: Goal | None,
    *,
    repeats: int,
    inner: int = 1,
    which: Stat = "p50",
) -> Ratio:
    a, b = interleaved([qdsl[1], alternative[1]], repeats=repeats, inner=inner)
    return compare(path, qdsl[0], alternative[0], a, b, goal=goal, which=which)


# -- output ------------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _verdict(r: Ratio) -> str:
    if r.met is None:
        return ""
    return "met" if r.met else "NOT met"


def cells(r: Ratio) -> list[str]:
    unit = "×"
    if r.goal is not None and r.goal.kind == "faster":
        unit = "× faster" if r.value >= 1 else "× (slower)"
    return [
        r.path,
        f"{r.qdsl}: {fmt_time(r.a)}",
        f"{r.alternative}: {fmt_time(r.b)}",
        f"{r.value:.2f}{unit}" + ("" if r.which == "p50" else f" ({r.which})"),
        f"{r.low:.2f}–{r.high:.2f}",
        str(r.goal) if r.goal else "(none)",
        _verdict(r),
    ]


HEAD = ["path", "qdsl", "alternative", "ratio", "spread", "goal", ""]


def table(rows: Sequence[Sequence[str]], head: Sequence[str]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def print_ratios(title: str, ratios: Sequence[Ratio], note: str = "") -> None:
    print(f"\n### {title}\n")
    print(table([cells(r) for r in ratios], HEAD))
    if note:
        print(f"\n{note}")
    print(flush=True)


# -- the summary of issue 12's table -----------------------------------------------------

SUMMARY: dict[str, Ratio] = {}


def record(key: str, ratio: Ratio) -> Ratio:
    """Keep `ratio` as the summary row `key` (the last one recorded wins)."""
    SUMMARY[key] = ratio
    return ratio


# The rows of issue 12's table, in its order (a row never recorded prints as not run).
SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
    ("json_compile", "JSON plan → bound SQL, warm"),
    ("text_compile", "text plan → SQL"),
    ("sqlite_executor", "executor per cached plan, SQLite demo"),
    ("pg_p50_raw", "PostgreSQL facts-first: p50 vs raw"),
    ("pg_p95_raw", "PostgreSQL facts-first: p95 vs raw"),
    ("pg_p50_guards", "PostgreSQL facts-first: p50 vs raw + guards"),
    ("pg_p95_guards", "PostgreSQL facts-first: p95 vs raw + guards"),
    ("plan_and_answer", "plan_and_answer on the demo"),
    ("version", "qdsl --version"),
    ("refs_list", "qdsl refs list"),
    ("ask_startup", "qdsl ask as one process"),
    ("envelope_1mb", "1 MB result stored + printed"),
    ("audit", "plan_and_answer, audit on vs off"),
)


def print_summary() -> None:
    rows = []
    for key, label in SUMMARY_ROWS:
        r = SUMMARY.get(key)
        rows.append(cells(r) if r else [label, "", "", "not run", "", "", ""])
    known = {key for key, _label in SUMMARY_ROWS}
    rows += [cells(r) for key, r in SUMMARY.items() if key not in known]
    print("\n## Summary (issue 12's table)\n")
    print(table(rows, HEAD))
    print(
        "\nratio: p50 unless marked; spread: lowest–highest ratio over the interleaved "
        "repeats; qdsl and alternative: the statistic's time per call.",
        flush=True,
    )


# -- arguments -----------------------------------------------------------------------------


def arguments(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The options every benchmark takes (`--quick`), extended by each."""
    parser = argparse.ArgumentParser(prog=prog, description=doc)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and repeats: proves the benchmark runs, measures nothing",
    )
    return parser
