"""stdio framing (issue 25, F4): after a line over the length limit, the next
line is read and answered.

A line 10 to 30,000 bytes over the 17 MiB limit used to swallow the next
message (asyncio's readline had dropped the overlong line and its newline
already, and the server dropped "the rest of it": the next line), so the
host waited forever for its ping. Here the limit is made small (the input
limit sets it: 4 x QDSL_MAX_INPUT_BYTES + 1 MiB) and lines just over it, far
over it, with their id first, last or absent, are each followed by a ping.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import QDSL, WAIT_S, log_events, server_env

from qdsl.mcp.stdio_lines import request_id

INPUT_BYTES = 65536
LIMIT = 4 * INPUT_BYTES + 1024 * 1024
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}


class Pipes:
    """`qdsl mcp --tenant t1` on pipes, with the small line limit."""

    def __init__(self, state: Path, log: Path) -> None:
        self.log = log.open("w")
        env = server_env(state, QDSL_MAX_INPUT_BYTES=str(INPUT_BYTES))
        self.proc = subprocess.Popen(
            [QDSL, "mcp", "--tenant", "t1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=WAIT_S))
        return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(WAIT_S)
        self.log.close()
        return code


def _overlong(size: int, where: str, id_: int) -> bytes:
    """A request line of exactly `size` bytes, its id first, last or absent."""
    head = {"jsonrpc": "2.0", "id": id_} if where == "first" else {"jsonrpc": "2.0"}
    start = json.dumps({**head, "method": "tools/call", "params": {"name": "ask"}})[:-2]
    start += ', "arguments": {"question": "'
    end = '"}}' + (f', "id": {id_}}}' if where == "last" else "}")
    return (start + "x" * (size - len(start) - len(end)) + end).encode()


@pytest.mark.parametrize("where", ["first", "last", "absent"])
def test_the_line_after_an_overlong_one_is_answered(where: str, tmp_path: Path) -> None:
    server = Pipes(tmp_path / "state", tmp_path / "server.log")
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        server.send(json.dumps(init).encode())
        assert "result" in server.receive()
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        next_id = 100
        for over in (1, 10, 1000, 30_000, 70_000, 3 * 1024 * 1024):
            next_id += 2
            server.send(_overlong(LIMIT + over, where, next_id))
            ping = next_id + 1
            server.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
            refused, answered = server.receive(), server.receive()
            assert refused["error"]["code"] == -32600, refused
            assert refused["error"]["data"]["code"] == "usage/message_too_large"
            assert refused["id"] == (next_id if where == "first" else None), (over, refused)
            assert answered == {"jsonrpc": "2.0", "id": ping, "result": {}}, (over, answered)
        # a line at the limit is still read whole (and refused by the input limit)
        server.send(_overlong(LIMIT - 1, "first", 7))
        at_limit = server.receive()
        assert at_limit["id"] == 7 and at_limit["result"]["isError"] is True
        assert server.close() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    events = [e for e in log_events(tmp_path / "server.log") if e["event"] == "overlong_message"]
    assert len(events) == 6 and all(e["max_bytes"] == LIMIT for e in events)


@settings(max_examples=200, deadline=None)
@given(
    id_=st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20)),
    before=st.dictionaries(
        st.text(max_size=5).filter(lambda k: k != "id"),
        st.recursive(st.none() | st.integers() | st.text(max_size=10), st.lists, max_leaves=5),
        max_size=3,
    ),
    data=st.data(),
)
def test_the_id_found_in_a_head_is_the_top_level_one(
    id_: int | str, before: dict[str, Any], data: st.DataObject
) -> None:
    """Whatever precedes it (nested "id" keys too), the top-level id is found in
    the whole line, and a head cut anywhere gives it or nothing, never another."""
    decoy = {"params": {"id": "not this one", "x": [{"id": 5}]}, **before}
    text = json.dumps({**decoy, "id": id_, "rest": "x" * 50})
    assert request_id(text) == id_
    cut = data.draw(st.integers(0, len(text)))
    assert request_id(text[:cut]) in (id_, None)
