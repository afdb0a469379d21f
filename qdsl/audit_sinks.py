"""Where audit lines go: the sinks and the one a request writes to (`default_sink`).

By default a rotating JSONL file in the state dir (`<state>/audit/audit.jsonl`,
rotated at 10 MB, 5 kept; `qdsl audit tail` reads it), plus
`QDSL_AUDIT_LOG=<path>` or `stderr` when set. Never stdout: with `--json`
stdout holds the envelope alone. `QDSL_AUDIT=off` turns the state-dir file off.
A sink whose `stages` is true (MemorySink, for tests and embedding hosts) also
gets one line per pipeline stage; a sink that `discards` (NullSink) is never
given a rendered line.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol, TextIO

from qdsl.audit_file import FileSink, RotatingFileSink
from qdsl.dsl.settings.config import STATE_ROOT_ENV, environ_key, getenv, state_root

AUDIT_DIR = "audit"
AUDIT_FILE = "audit.jsonl"


class AuditSink(Protocol):
    def write(self, line: str) -> None: ...


class StreamSink:
    """Writes to `stream`, or to whatever sys.stderr is at the time (None)."""

    stages = False

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def write(self, line: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(line + "\n")
        stream.flush()


class TeeSink:
    def __init__(self, *sinks: AuditSink) -> None:
        self.sinks = sinks
        self.stages = any(getattr(s, "stages", False) for s in sinks)

    def write(self, line: str) -> None:
        for sink in self.sinks:
            sink.write(line)


class MemorySink:
    """Keeps events as dicts, stage events included; what tests read."""

    stages = True

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line)
        self.events.append(json.loads(line))


class NullSink:
    stages = False
    # Lines written here go nowhere: the Audit does not render them.
    discards = True

    def write(self, line: str) -> None:
        return None


_OVERRIDE: ContextVar[AuditSink | None] = ContextVar("qdsl_audit_sink", default=None)


def audit_path() -> Path:
    """The state dir's audit file (`qdsl audit tail` reads it); nothing is created."""
    return state_root() / AUDIT_DIR / AUDIT_FILE


def _audit_dir() -> Path:
    """`<state>/audit/`, checked (the user's own, no symlink) and made private."""
    from qdsl.dsl.settings.private_dir import private_child

    return private_child(AUDIT_DIR)


# Sinks per configuration (state dir, QDSL_AUDIT, QDSL_AUDIT_LOG): a process
# answering many questions keeps one open audit file instead of one per request.
_SINKS: dict[tuple[object, ...], AuditSink] = {}
_SINK_ENV = ("QDSL_AUDIT", "QDSL_AUDIT_LOG")


def _sink_key() -> tuple[str | None, ...]:
    # environ_key over what locates the state dir and the audit settings, read
    # per request; with QDSL_STATE_DIR set, the platform's HOME and
    # XDG_STATE_HOME do not matter (dsl.settings.config.state_root), so they are not read.
    state = getenv(STATE_ROOT_ENV[0])
    where = environ_key(STATE_ROOT_ENV) if not state else (state,)
    return (*where, *environ_key(_SINK_ENV))


def default_sink() -> AuditSink:
    override = _OVERRIDE.get()
    if override is not None:
        return override
    key = _sink_key()
    sink = _SINKS.get(key)
    if sink is None:
        sink = _SINKS[key] = _build_sink()
    return sink


def _build_sink() -> AuditSink:
    sinks: list[AuditSink] = []
    if os.environ.get("QDSL_AUDIT", "").strip().lower() not in ("off", "0", "false", "no"):
        # Opened on the first line, in a checked state dir: a state dir that cannot
        # hold the log fails the request that needed a line (Audit._finish).
        sinks.append(RotatingFileSink(audit_path(), prepare=_audit_dir))
    target = os.environ.get("QDSL_AUDIT_LOG", "").strip()
    if target in ("-", "stderr"):
        sinks.append(StreamSink())
    elif target:
        sinks.append(FileSink(target))
    if not sinks:
        return NullSink()
    return sinks[0] if len(sinks) == 1 else TeeSink(*sinks)


@contextmanager
def use_sink(sink: AuditSink) -> Iterator[AuditSink]:
    """Route every audit event in this context to `sink` (tests, embedding hosts)."""
    token = _OVERRIDE.set(sink)
    try:
        yield sink
    finally:
        _OVERRIDE.reset(token)
