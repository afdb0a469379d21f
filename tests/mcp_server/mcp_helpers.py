"""Driving `qdsl mcp` as its users do: a process, spoken to by the SDK's own client.

`stdio_session` spawns `qdsl mcp --tenant T` through `mcp.client.stdio`;
`HttpServer` runs `qdsl mcp --http 127.0.0.1:0` (the port it picked is read
from its log) and `http_session` connects with a bearer token through
`mcp.client.streamable_http`. Every wait is generous and none is asserted on:
the machine may be loaded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from qdsl.facts.demo import DEMO_NOW

QDSL = str(Path(sys.executable).parent / "qdsl")
WAIT_S = 120.0


def server_env(state_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "QDSL_STATE_DIR": str(state_dir),
            "QDSL_NOW": DEMO_NOW.isoformat(),
            "QDSL_STATEMENT_TIMEOUT_MS": "600000",
            **extra,
        }
    )
    env.pop("QDSL_DATABASE_URL", None)
    return env


@asynccontextmanager
async def stdio_session(
    args: list[str], env: dict[str, str], log: Path, *, module: str | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized client session with `qdsl <args>` (e.g. --db URL mcp --tenant t1),
    or with `python -m <module> <args>`, a module of this directory standing in
    for `qdsl` (e.g. `slow_lower`)."""
    params = StdioServerParameters(command=QDSL, args=args, env=env)
    if module is not None:
        here = str(Path(__file__).parent)
        path = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", module, *args], env={**env, "PYTHONPATH": path}
        )
    with log.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=WAIT_S) as session,
        ):
            await session.initialize()
            yield session


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path
    state_dir: Path

    @classmethod
    def start(
        cls,
        args: list[str],
        env: dict[str, str],
        state_dir: Path,
        mcp_args: tuple[str, ...] = (),
        *,
        bind: str = "127.0.0.1:0",
        module: str | None = None,
    ) -> HttpServer:
        """`qdsl <args> mcp --http <bind> <mcp_args>`, once it listens; with
        `module`, `python -m <module>` of this directory stands in for `qdsl`."""
        log = state_dir.parent / f"http-server-{time.monotonic_ns()}.log"
        command = [QDSL]
        if module is not None:
            here = str(Path(__file__).parent)
            env = {
                **env,
                "PYTHONPATH": os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p),
            }
            command = [sys.executable, "-m", module]
        with log.open("w") as out:
            proc = subprocess.Popen(
                [*command, *args, "mcp", "--http", bind, *mcp_args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env,
            )
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            found = [
                e["url"] for e in log_events(log, strict=False) if e.get("transport") == "http"
            ]
            if found:
                return cls(proc, found[0], log, state_dir)
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.kill()
        raise AssertionError(f"qdsl mcp --http did not start:\n{log.read_text()}")

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def token(self, tenant: str) -> tuple[str, str]:
        """A new token for `tenant` (`qdsl mcp token add`): (token, id)."""
        data = cli_json(["mcp", "token", "add", "--tenant", tenant], self.state_dir)
        return data["token"], data["id"]


def log_events(log: Path, *, strict: bool = True) -> list[dict[str, Any]]:
    """The server's log: one JSON object a line (after the last newline, a line
    still being written is left out). `strict=False` skips lines that are not
    JSON (a server that failed at start prints its error as text), so the
    caller's own assertion names what happened."""
    complete = log.read_text().split("\n")[:-1]
    events = []
    for line in complete:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            if strict:
                raise
    return events


def cli_json(args: list[str], state_dir: Path, *, ok: bool = True) -> Any:
    out = subprocess.run(
        [QDSL, "--json", *args],
        capture_output=True,
        env=server_env(state_dir),
        timeout=WAIT_S,
        check=False,
    )
    text = out.stdout if ok else out.stderr
    assert (out.returncode == 0) == ok, out.stderr.decode()
    return json.loads(text)["data" if ok else "error"]


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(WAIT_S)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, read_timeout_seconds=WAIT_S) as session,
    ):
        await session.initialize()
        yield session


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def ok_data(result: types.CallToolResult) -> Any:
    env = structured(result)
    assert result.is_error is False, env
    assert env["ok"] is True and env["schemaVersion"] == 1
    return env["data"]


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    env = structured(result)
    assert result.is_error is True, env
    assert env["ok"] is False
    error: dict[str, Any] = env["error"]
    return error


def without_trace(data: Any) -> Any:
    """The data less what differs on every run (trace and execution ids, at any depth)."""
    if isinstance(data, dict):
        return {
            k: without_trace(v) for k, v in data.items() if k not in {"trace_id", "execution_id"}
        }
    if isinstance(data, list):
        return [without_trace(v) for v in data]
    return data
