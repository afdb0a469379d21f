"""Per-call latency of `ask` over MCP stdio, beside `qdsl ask` as a process and
`plan_and_answer` in-process (issue 11).

    python -m benchmarks.bench_mcp [--quick] [--repeats N]

One `qdsl mcp --tenant t1` server is started once and spoken to by the SDK's
own client (its start-up is not a call's cost: a host starts it once). Every
repeat asks each question through the three paths, the order rotated per
question (as `harness.interleaved_over` does), all driven from one event loop
as a host's client would be: the in-process and process paths block it while
they run, which is their cost. All three answer from the same embedded SQLite
demo in the state dir. Goal: MCP within 1.5x of in-process (p50); the process
row is for scale.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir

QUESTIONS = (
    "有多少个进行中的项目",
    "list all projects",
    "帮我看看系统里面有没有 A 股项目",
)
PATHS = ("mcp stdio", "plan_and_answer", "qdsl ask process")
TENANT = "t1"


async def _run(questions: tuple[str, ...], repeats: int) -> list[H.Samples]:
    import subprocess

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from qdsl.api import plan_and_answer

    qdsl = str(Path(sys.executable).parent / "qdsl")
    params = StdioServerParameters(
        command=qdsl, args=["mcp", "--tenant", TENANT], env=dict(os.environ)
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()

            async def over_mcp(question: str) -> None:
                result = await session.call_tool("ask", {"question": question})
                content = result.structured_content
                assert not result.is_error and isinstance(content, dict)
                assert content["data"]["status"] == "answered", content

            async def in_process(question: str) -> None:
                assert plan_and_answer(question, TENANT).status == "answered"

            async def as_process(question: str) -> None:
                done = subprocess.run(
                    [qdsl, "--json", "ask", "--tenant", TENANT, question],
                    capture_output=True,
                    check=False,
                )
                assert done.returncode == 0, done.stderr

            variants: list[Callable[[str], Awaitable[None]]] = [over_mcp, in_process, as_process]
            for question in questions:  # warm every path (imports, caches, the value index)
                for fn in variants:
                    await fn(question)
            out = [H.Samples() for _ in variants]
            n = len(variants)
            for r in range(repeats):
                for sample in out:
                    sample.repeats.append([])
                for i, question in enumerate(questions):
                    for index in H.rotation(r + i, n):
                        t0 = time.perf_counter_ns()
                        await variants[index](question)
                        out[index].repeats[-1].append((time.perf_counter_ns() - t0) / 1e9)
            return out


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_mcp", __doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args, _ = parser.parse_known_args(argv)
    questions, repeats = (QUESTIONS[:1], 1) if args.quick else (QUESTIONS, args.repeats)
    with state_dir():
        mcp, inproc, process = anyio.run(_run, questions, repeats)
    label = f"ask over MCP stdio ({len(questions)} demo questions, per call)"
    rows = [
        H.record(
            "mcp_ask",
            H.compare(label, "mcp stdio", "plan_and_answer", mcp, inproc, goal=H.at_most(1.5)),
        ),
        H.compare(
            label, "mcp stdio", "plan_and_answer", mcp, inproc, goal=H.at_most(1.5), which="p95"
        ),
        H.compare(label, "mcp stdio", "qdsl ask process", mcp, process, goal=H.faster(1)),
    ]
    H.print_ratios("ask: MCP stdio vs in-process vs a process per call", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
