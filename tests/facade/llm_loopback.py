"""A loopback HTTP server speaking the OpenAI chat completions API and the
Anthropic messages API with scripted replies, for the adapters' tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Plan:
    """Reply with this plan text (JSON or the text form)."""

    text: str


@dataclass(frozen=True)
class Status:
    """Reply with this HTTP error status."""

    code: int


@dataclass(frozen=True)
class Stall:
    """Answer nothing for this long (the client times out first)."""

    seconds: float


Action = Plan | Status | Stall


@dataclass
class Loopback:
    script: list[Action]
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    port: int = 0

    def next_action(self) -> Action:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    @property
    def prompts(self) -> list[str]:
        out = []
        for _, body in self.requests:
            user = [m for m in body["messages"] if m["role"] == "user"]
            content = user[-1]["content"]
            out.append(content if isinstance(content, str) else json.dumps(content))
        return out


def _openai_body(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
    }


def _anthropic_body(text: str, tools: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if tools:
        with suppress(ValueError):
            block = {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "write_plan",
                "input": json.loads(text),
            }
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "test-model",
        "content": [block],
        "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 321, "output_tokens": 45},
    }


def _handler(box: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            if code == 429:
                self.send_header("retry-after", "0")
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            box.requests.append((self.path, body))
            action = box.next_action()
            try:
                if isinstance(action, Stall):
                    time.sleep(action.seconds)
                    return
                if isinstance(action, Status):
                    err = {"type": "error", "error": {"type": "x", "message": "scripted"}}
                    self._send(action.code, err)
                    return
                if self.path.endswith("/chat/completions"):
                    self._send(200, _openai_body(action.text))
                else:
                    self._send(200, _anthropic_body(action.text, "tools" in body))
            except OSError:  # the client gave up (a timeout): nothing to answer
                pass

    return Handler


@contextmanager
def loopback(script: list[Action]) -> Iterator[Loopback]:
    box = Loopback(list(script))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(box))
    server.daemon_threads = True
    box.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
