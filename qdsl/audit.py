"""Audit events: one structlog JSON line per pipeline stage, keyed by trace_id.

What an operator needs to replay a decision (gate kind, plan hash, template,
SQL fingerprints, row counts, verdict, timings) and nothing a tenant would not
want in a log: no question text, no filter values, no row data. The guarantee
is structural: only whitelisted keys with scalar (or list-of-scalar) values
are written; anything else is dropped and its key named in `dropped`.

Events go to a sink: `QDSL_AUDIT_LOG=<path>` appends to a file,
`QDSL_AUDIT_LOG=stderr` (or `-`) writes to stderr, unset is quiet. Never
stdout: with `--json` stdout holds the envelope alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol, TextIO

import structlog

from qdsl.dsl.ir import Plan

ALLOWED_KEYS: frozenset[str] = frozenset(
    {
        "stage",
        "status",
        "kind",
        "route_mode",
        "language",
        "question_chars",
        "planner",
        "attempts",
        "attempt",
        "plan_hash",
        "query_type",
        "entity_type",
        "answer_contract",
        "filter_fields",
        "operators",
        "filter_count",
        "template",
        "sql_fingerprints",
        "execution_id",
        "row_count",
        "evidence_count",
        "count_present",
        "baseline_present",
        "retrieval",
        "used_fallback",
        "outcome",
        "checks_run",
        "failed",
        "passed",
        "error_code",
        "elapsed_ms",
        "tenant_bound",
        "warnings",
        "retry",
        "reason_code",
        "dropped",
        "expected_query_type",
    }
)
_SCALARS = (str, int, float, bool, type(None))


class AuditSink(Protocol):
    def write(self, line: str) -> None: ...


class StreamSink:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


class FileSink:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def write(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


class MemorySink:
    """Keeps events as dicts; what tests read."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line)
        self.events.append(json.loads(line))


class NullSink:
    def write(self, line: str) -> None:
        return None


_OVERRIDE: ContextVar[AuditSink | None] = ContextVar("qdsl_audit_sink", default=None)


def default_sink() -> AuditSink:
    override = _OVERRIDE.get()
    if override is not None:
        return override
    target = os.environ.get("QDSL_AUDIT_LOG", "").strip()
    if not target:
        return NullSink()
    if target in ("-", "stderr"):
        return StreamSink(sys.stderr)
    return FileSink(target)


@contextmanager
def use_sink(sink: AuditSink) -> Iterator[AuditSink]:
    """Route every audit event in this context to `sink` (tests, embedding hosts)."""
    token = _OVERRIDE.set(sink)
    try:
        yield sink
    finally:
        _OVERRIDE.reset(token)


def _clean(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    return _DROP


_DROP = object()


class _SinkLogger:
    def __init__(self, sink: AuditSink) -> None:
        self.sink = sink

    def msg(self, message: str) -> None:
        self.sink.write(message)

    info = msg


def plan_hash(plan: Plan) -> str:
    canonical = json.dumps(plan.to_json_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def plan_shape(plan: Plan) -> dict[str, Any]:
    """The plan as the log may see it: names and operators, never values."""
    return {
        "plan_hash": plan_hash(plan),
        "query_type": plan.query_type.value,
        "entity_type": plan.entity_type,
        "filter_fields": [f.field for f in plan.filters],
        "operators": [f.operator.value for f in plan.filters],
        "filter_count": len(plan.filters),
    }


class Audit:
    """The audit trail of one request."""

    def __init__(self, trace_id: str, sink: AuditSink | None = None) -> None:
        self.trace_id = trace_id
        self._log = structlog.wrap_logger(
            _SinkLogger(sink or default_sink()),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.JSONRenderer(ensure_ascii=False, sort_keys=False),
            ],
        )

    def event(self, stage: str, **fields: Any) -> None:
        clean: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in fields.items():
            kept = _clean(value) if key in ALLOWED_KEYS else _DROP
            if kept is _DROP:
                dropped.append(key)
            else:
                clean[key] = kept
        if dropped:
            clean["dropped"] = sorted(dropped)
        self._log.info(f"qdsl.{stage}", trace_id=self.trace_id, stage=stage, **clean)

    @contextmanager
    def timed(self, stage: str, **fields: Any) -> Iterator[dict[str, Any]]:
        """Emit `stage` when the block ends, with its elapsed_ms and what it added."""
        extra: dict[str, Any] = dict(fields)
        start = time.perf_counter()
        try:
            yield extra
        finally:
            extra["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 3)
            self.event(stage, **extra)
