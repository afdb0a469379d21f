"""MCP over HTTP at 2 worker processes against 1 (issue 24, item 3).

    python -m benchmarks.bench_mcp_workers [--quick] [--callers 8] [--rounds 6]
        [--calls 40] [--admin-url URL] [--skip-pg]

Two servers of one deployment run side by side on a throwaway PostgreSQL
database holding the demo, both with the PostgreSQL ref store:
`qdsl mcp --http --workers 1` (one process, MCP sessions as usual) and
`--workers 2` (two processes on one socket, served without sessions). Rounds
alternate the two, the order flipped every round; in a round C callers each
make N `ask` calls over keep-alive connections of their own, the demo's
questions in turn. The client is a few lines of asyncio on raw sockets (one
request written, the chunked event stream read to its end), so that it takes
as little of the machine's two cores as it can; it is the same client for
both servers, so whatever it takes it takes from both.

Reported: throughput (the inverse of a round's wall time per call), 2
processes over 1 (goal ≥ 1.7×), and the servers' own CPU time per call (all
their processes, from /proc), the figure the scaling note's paper curve is
drawn from. Without a PostgreSQL server this says so and stops.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import harness as H
from benchmarks.bench_executor import ADMIN_URL
from benchmarks.dataset import pg_reachable, throwaway_pg
from qdsl.facts.demo.setup import ensure_demo

QUESTIONS = ("list all projects", "有多少个进行中的项目", "Are there any A-share projects?")
TENANT = "t1"
WAIT_S = 120.0
VERSION = "2025-11-25"
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _qdsl() -> str:
    return str(Path(sys.executable).parent / "qdsl")


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    host: str
    port: int
    log: Path

    def pids(self) -> list[int]:
        """The server's processes: the one started and, with workers, its children."""
        found = [self.proc.pid]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def cpu_s(self) -> float:
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / TICKS

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start(db_url: str, workers: int, state: Path, callers: int) -> Server:
    env = {**os.environ, "QDSL_STATE_DIR": str(state), "QDSL_REF_STORE": "postgresql"}
    env.pop("QDSL_DATABASE_URL", None)
    log = state.parent / f"server-{workers}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                _qdsl(),
                "--db",
                db_url,
                "mcp",
                "--http",
                "127.0.0.1:0",
                "--workers",
                str(workers),
                "--max-concurrency",
                str(callers),
                "--log-level",
                "WARNING",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=env,
        )
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        server = Server(proc, "127.0.0.1", 0, log)
        ports = [p for pid in server.pids() if (p := _listening_port(pid)) is not None]
        if ports:
            server.port = ports[0]
            return server
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"qdsl mcp --http did not start:\n{log.read_text()}")


def _listening_port(pid: int) -> int | None:
    """The port the process listens on, from /proc (the server logs it at INFO
    only, and at INFO it would also write a line per call)."""
    inodes: set[str] = set()
    with_fds = Path(f"/proc/{pid}/fd")
    for fd in with_fds.glob("*") if with_fds.exists() else []:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
            return int(cols[1].split(":")[1], 16)
    return None


def token(state: Path, tenant: str) -> str:
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    out = subprocess.run(
        [_qdsl(), "--json", "mcp", "token", "add", "--tenant", tenant],
        capture_output=True,
        env=env,
        check=True,
        timeout=WAIT_S,
    )
    return str(json.loads(out.stdout)["data"]["token"])


class Caller:
    """One keep-alive connection, as a host's HTTP client keeps it."""

    def __init__(self, server: Server, bearer: str) -> None:
        self.server, self.bearer = server, bearer
        self.session: str | None = None
        self.next_id = 0
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        """A fresh connection (the session, if any, lives on in the server): uvicorn
        closes a connection idle for 5 s, as it is while the other server's round runs."""
        if self.writer is not None:
            self.writer.close()
        self.reader, self.writer = await asyncio.open_connection(self.server.host, self.server.port)

    async def open(self) -> None:
        await self.connect()
        params = {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        headers, _ = await self.post({"method": "initialize", "params": params})
        self.session = headers.get("mcp-session-id")
        await self.post({"method": "notifications/initialized"}, notification=True)

    async def post(
        self, message: dict[str, object], *, notification: bool = False
    ) -> tuple[dict[str, str], bytes]:
        if not notification:
            self.next_id += 1
            message = {**message, "id": self.next_id}
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: {self.server.host}:{self.server.port}",
            f"Authorization: Bearer {self.bearer}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"MCP-Protocol-Version: {VERSION}",
            f"Content-Length: {len(body)}",
        ]
        if self.session:
            head.append(f"Mcp-Session-Id: {self.session}")
        assert self.writer is not None, "connect() first"
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        return await self._response()

    async def _response(self) -> tuple[dict[str, str], bytes]:
        reader = self.reader
        assert reader is not None, "connect() first"
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                parts.append(await reader.readexactly(size + 2))
                if size == 0:
                    break
            body = b"".join(parts)
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        if status >= 300:
            raise RuntimeError(f"HTTP {status}: {body[:300]!r}")
        return headers, body

    async def ask(self, question: str) -> None:
        _, body = await self.post(
            {"method": "tools/call", "params": {"name": "ask", "arguments": {"question": question}}}
        )
        if b'"isError":false' not in body:
            raise RuntimeError(f"the call failed: {body[:400]!r}")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _round(callers: list[Caller], per_caller: int) -> float:
    """Every caller makes `per_caller` calls at once: wall seconds per call."""

    async def work(i: int, caller: Caller) -> None:
        for n in range(per_caller):
            await caller.ask(QUESTIONS[(i + n) % len(QUESTIONS)])

    t0 = time.perf_counter()
    await asyncio.gather(*(work(i, c) for i, c in enumerate(callers)))
    return (time.perf_counter() - t0) / (len(callers) * per_caller)


async def _compare(
    servers: list[Server], bearer: str, callers: int, rounds: int, per_caller: int
) -> tuple[list[H.Samples], list[float]]:
    pools = [[Caller(s, bearer) for _ in range(callers)] for s in servers]
    for pool in pools:
        for caller in pool:
            await caller.open()
    walls = [H.Samples() for _ in servers]
    cpu = [0.0 for _ in servers]
    calls = [0 for _ in servers]
    try:
        for pool in pools:  # warm: every worker's pool, caches and plans
            await _round(pool, max(3, 2 * len(QUESTIONS)))
        for r in range(rounds):
            for index in H.rotation(r, len(servers)):
                for caller in pools[index]:
                    await caller.connect()
                before = servers[index].cpu_s()
                walls[index].repeats.append([await _round(pools[index], per_caller)])
                cpu[index] += servers[index].cpu_s() - before
                calls[index] += callers * per_caller
    finally:
        for pool in pools:
            for caller in pool:
                caller.close()
    return walls, [c / n for c, n in zip(cpu, calls, strict=True)]


def measure(
    db_url: str, callers: int, rounds: int, per_caller: int, tenant: str = TENANT
) -> tuple[H.Ratio, str]:
    """2 processes over 1 on `db_url` (a database of the demo's schema), asking for `tenant`."""
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-workers-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir(mode=0o700)
        bearer = token(state, tenant)
        servers = [start(db_url, 1, state, callers), start(db_url, 2, state, callers)]
        try:
            walls, cpu = asyncio.run(_compare(servers, bearer, callers, rounds, per_caller))
        finally:
            for server in servers:
                server.stop()
    ratio = H.compare(
        f"MCP HTTP `ask`, {callers} callers, PG ref store: wall per call (1/throughput)",
        "2 processes",
        "1 process",
        walls[1],
        walls[0],
        goal=H.faster(1.7),
    )
    per_s = [1 / H.stat(w.all, "p50") for w in walls]
    note = (
        f"throughput (median round): 1 process {per_s[0]:.0f} calls/s, 2 processes "
        f"{per_s[1]:.0f} calls/s ({per_s[1] / per_s[0]:.2f}×); server CPU per call "
        f"(all its processes): {cpu[0] * 1000:.2f} ms at 1, {cpu[1] * 1000:.2f} ms at 2; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; "
        f"{rounds} rounds × {callers} callers × {per_caller} calls."
    )
    return ratio, note


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_mcp_workers", __doc__)
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=40, help="calls per caller per round")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--skip-pg", action="store_true")
    args, _ = parser.parse_known_args(argv)
    callers, rounds, calls = args.callers, args.rounds, args.calls
    if args.quick:
        callers, rounds, calls = 2, 2, 3
    why = "--skip-pg" if args.skip_pg else pg_reachable(args.admin_url)
    if why is not None:
        print(f"\nskipped: {why}")
        return 0
    with throwaway_pg(args.admin_url) as url:
        ensure_demo(url)
        ratio, note = measure(url, callers, rounds, calls)
    H.record("mcp_workers", ratio)
    H.print_ratios("MCP over HTTP: 2 worker processes vs 1", [ratio], note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
