"""Per-call latency of `ask` over MCP stdio, beside `plan_and_answer` in-process
and `qdsl ask` as a process (issue 11).

    python -m benchmarks.bench_mcp [--quick] [--repeats N]

Two `qdsl mcp --tenant t1` servers are started once (a host starts its server
once: start-up is not a call's cost), each spoken to by one client:

* a host's client: it writes the JSON-RPC request as one line on the
  server's stdin, reads the response line from its stdout and parses it
  (`json.loads`). That is all any host must do, so this row is the server's
  cost as a host sees it, and the row held to the goal (MCP within 1.5x of
  in-process, p50 and p95).
* `tools/list` beside `ping`, on the host's connection: what listing the
  tools (large input schemas) costs above the protocol's floor.
* the SDK's own `ClientSession`, for scale: a Python host using it also pays
  the client's pydantic parsing and its check of `structuredContent` against
  the tool's `outputSchema` (jsonschema) on every call.

Each comparison is a run of its own, the pair interleaved: every repeat asks
each question through both paths, the order rotated per question
(`harness.rotation`), all driven from one event loop as a host's client
would be (the in-process and process paths block it while they run, which is
their cost). A `qdsl ask` process takes about a second and touches much
memory: run between two timed calls it would cool the server's caches and the
benchmark's own and measure that, so it is never interleaved with the other
two. All answer from the same embedded SQLite demo in the state dir. On
Linux the server's CPU time per call (all its threads, from /proc) is also
set beside `plan_and_answer`'s, a reading a loaded machine disturbs less than
wall time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import IO, Any

import anyio

from benchmarks import harness as H
from benchmarks.bench_executor import state_dir

QUESTIONS = (
    "有多少个进行中的项目",
    "list all projects",
    "帮我看看系统里面有没有 A 股项目",
)
TENANT = "t1"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


class LineClient:
    """A host's side of stdio: one JSON-RPC message a line each way."""

    def __init__(self, command: list[str], errlog: IO[str]) -> None:
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog
        )
        self.next_id = 0
        self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        response = json.loads(self.proc.stdout.readline())
        assert response["id"] == self.next_id, response
        return response["result"]

    def cpu_seconds(self) -> float | None:
        """The server's CPU time so far, every thread (None off Linux)."""
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        except OSError:
            return None
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def _answered(structured: Any) -> None:
    assert isinstance(structured, dict), structured
    assert structured["data"]["status"] == "answered", structured


class Paths:
    """The four ways to ask, each timed per call; in-process CPU time kept."""

    def __init__(self, qdsl: str, host: LineClient, session: Any) -> None:
        self.qdsl, self.host, self.session = qdsl, host, session
        self.cpu = 0.0

    async def over_mcp(self, question: str) -> None:
        result = self.host.request(
            "tools/call", {"name": "ask", "arguments": {"question": question}}
        )
        assert result["isError"] is False
        _answered(result["structuredContent"])

    async def over_sdk(self, question: str) -> None:
        result = await self.session.call_tool("ask", {"question": question})
        assert not result.is_error
        _answered(result.structured_content)

    async def list_tools(self, _question: str) -> None:
        assert len(self.host.request("tools/list", {})["tools"]) == 6

    async def ping(self, _question: str) -> None:
        assert self.host.request("ping", {}) == {}

    async def in_process(self, question: str) -> None:
        from qdsl.api import plan_and_answer

        before = time.process_time()
        assert plan_and_answer(question, TENANT).status == "answered"
        self.cpu += time.process_time() - before

    async def as_process(self, question: str) -> None:
        done = subprocess.run(
            [self.qdsl, "--json", "ask", "--tenant", TENANT, question],
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr


async def _interleaved(
    questions: tuple[str, ...],
    repeats: int,
    variants: Sequence[Callable[[str], Awaitable[None]]],
    *,
    warm: bool = True,
) -> list[H.Samples]:
    for question in questions if warm else ():  # warm every path (imports, caches)
        for fn in variants:
            await fn(question)
    out = [H.Samples() for _ in variants]
    for r in range(repeats):
        for sample in out:
            sample.repeats.append([])
        for i, question in enumerate(questions):
            for index in H.rotation(r + i, len(variants)):
                t0 = time.perf_counter_ns()
                await variants[index](question)
                out[index].repeats[-1].append((time.perf_counter_ns() - t0) / 1e9)
    return out


async def _run(questions: tuple[str, ...], repeats: int) -> tuple[list[H.Samples], H.Ratio | None]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    qdsl = str(Path(sys.executable).parent / "qdsl")
    command = [qdsl, "mcp", "--tenant", TENANT]
    params = StdioServerParameters(command=qdsl, args=command[1:], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        host = LineClient(command, errlog)
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            paths = Paths(qdsl, host, session)
            pair = [paths.over_mcp, paths.in_process]
            await _interleaved(questions, 1, [*pair, paths.over_sdk, paths.as_process])  # warm
            # the server idles while the other path runs: its CPU time is its calls'
            paths.cpu, before = 0.0, host.cpu_seconds()
            mcp, inproc = await _interleaved(questions, repeats, pair, warm=False)
            after, inproc_cpu = host.cpu_seconds(), paths.cpu
            sdk, inproc_sdk = await _interleaved(
                questions, repeats, [paths.over_sdk, paths.in_process]
            )
            listed, pinged = await _interleaved(questions, repeats, [paths.list_tools, paths.ping])
            mcp_p, process = await _interleaved(
                questions, max(1, repeats // 4), [paths.over_mcp, paths.as_process]
            )
        host.close()
    out = [mcp, inproc, sdk, inproc_sdk, mcp_p, process, listed, pinged]
    calls = repeats * len(questions)
    if before is None or after is None:  # no /proc to read
        return out, None
    return out, H.compare(
        "ask: CPU time per call (the server's, every thread; clock ticks over the run)",
        "mcp stdio server",
        "plan_and_answer",
        H.Samples([[(after - before) / calls]]),
        H.Samples([[inproc_cpu / calls]]),
        goal=None,
    )


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_mcp", __doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args, _ = parser.parse_known_args(argv)
    questions, repeats = (QUESTIONS[:1], 1) if args.quick else (QUESTIONS, args.repeats)
    with state_dir():
        (mcp, inproc, sdk, inproc_sdk, mcp_p, process, listed, pinged), cpu_row = anyio.run(
            _run, questions, repeats
        )
    label = f"ask over MCP stdio ({len(questions)} demo questions, per call)"
    rows = [
        H.record(
            "mcp_ask",
            H.compare(
                label, "mcp stdio, host", "plan_and_answer", mcp, inproc, goal=H.at_most(1.5)
            ),
        ),
        H.compare(
            label,
            "mcp stdio, host",
            "plan_and_answer",
            mcp,
            inproc,
            goal=H.at_most(1.5),
            which="p95",
        ),
        H.compare(label, "mcp stdio, SDK client", "plan_and_answer", sdk, inproc_sdk, goal=None),
        H.compare(label, "mcp stdio, host", "qdsl ask process", mcp_p, process, goal=H.faster(1)),
    ]
    if cpu_row is not None:
        rows.append(cpu_row)
    # the six tools' schemas, beside the protocol's own floor (a ping) on the same server
    rows.append(
        H.compare(
            "tools/list over MCP stdio (per call)", "tools/list", "ping", listed, pinged, goal=None
        )
    )
    H.print_ratios("ask: MCP stdio vs in-process vs a process per call", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
