"""Per-call latency of `ask` over MCP stdio, beside `qdsl ask` as a process and
`plan_and_answer` in-process (issue 11).

    .venv/bin/python -m benchmarks.bench_mcp [--quick] [--repeats N]

One `qdsl mcp --tenant t1` server is started once and spoken to by the SDK's
own client (its start-up is not a call's cost: a host starts it once); each
round asks every question through the three paths, in a rotating order, so a
slow moment of the machine falls on all three alike. All three answer from the
same embedded SQLite demo in a temp state dir. Prints p50 / p95 per path and
question, and the ratios to in-process (goal: MCP within 1.5x of in-process).
Exit code 0 always: speed is reported, not asserted.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

QUESTIONS = (
    "有多少个进行中的项目",
    "list all projects",
    "帮我看看系统里面有没有 A 股项目",
)
PATHS = ("in-process", "mcp stdio", "qdsl ask process")
GOAL = 1.5


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _args(argv: list[str]) -> tuple[bool, int | None]:
    quick = "--quick" in argv
    repeats = None
    if "--repeats" in argv:
        repeats = int(argv[argv.index("--repeats") + 1])
    return quick, repeats


async def _run(rounds: int, qdsl: str) -> dict[tuple[str, str], list[float]]:
    """Every path driven from one event loop, as a host's client would be (the
    in-process and process paths block it while they run, which is their cost)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from qdsl import plan_and_answer

    params = StdioServerParameters(
        command=qdsl, args=["mcp", "--tenant", "t1"], env=dict(os.environ)
    )
    samples: dict[tuple[str, str], list[float]] = {(p, q): [] for p in PATHS for q in QUESTIONS}
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            await s.list_tools()

            async def over_mcp(question: str) -> None:
                result = await s.call_tool("ask", {"question": question})
                content = result.structured_content
                assert not result.is_error and content["data"]["status"] == "answered"

            async def in_process(question: str) -> None:
                assert plan_and_answer(question, "t1").status == "answered"

            async def as_process(question: str) -> None:
                done = subprocess.run(
                    [qdsl, "--json", "ask", "--tenant", "t1", question],
                    capture_output=True,
                    check=False,
                )
                assert done.returncode == 0, done.stderr

            run: dict[str, Callable[[str], Awaitable[None]]] = {
                "in-process": in_process,
                "mcp stdio": over_mcp,
                "qdsl ask process": as_process,
            }
            for q in QUESTIONS:  # warm every path (imports, caches, the value index)
                for path in PATHS:
                    await run[path](q)
            for i in range(rounds):
                order = PATHS[i % 3 :] + PATHS[: i % 3]
                for q in QUESTIONS:
                    for path in order:
                        t0 = time.perf_counter()
                        await run[path](q)
                        samples[(path, q)].append((time.perf_counter() - t0) * 1000)
    return samples


def main(argv: list[str] | None = None) -> int:
    quick, repeats = _args(list(sys.argv[1:] if argv is None else argv))
    rounds = repeats or (5 if quick else 30)
    qdsl = str(Path(sys.executable).parent / "qdsl")
    with tempfile.TemporaryDirectory() as state:
        os.environ["QDSL_STATE_DIR"] = state
        os.environ["QDSL_AUDIT"] = os.environ.get("QDSL_AUDIT", "on")
        samples = anyio.run(_run, rounds, qdsl)
    print(f"ask latency, {rounds} interleaved rounds per question (ms; embedded SQLite demo)")
    print(f"{'question':<34} {'path':<18} {'p50':>8} {'p95':>8} {'x in-proc p50':>14}")
    ratios: list[float] = []
    for q in QUESTIONS:
        base = statistics.median(samples[("in-process", q)])
        for path in PATHS:
            s = samples[(path, q)]
            p50 = statistics.median(s)
            ratio = p50 / base
            if path == "mcp stdio":
                ratios.append(ratio)
            print(f"{q[:32]:<34} {path:<18} {p50:8.1f} {_pct(s, 0.95):8.1f} {ratio:13.2f}x")
    worst = max(ratios)
    verdict = "within" if worst <= GOAL else "OVER"
    print(f"mcp stdio / in-process p50: worst {worst:.2f}x ({verdict} the {GOAL}x goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
