"""The audit log: one JSON line per request, on by default, with no values in it.

Every request that ends (answered, refused, gated, clarify, ...) or fails with
an error (a policy error such as a foreign tenant, a database fault) writes one
**summary** line: timestamp, `trace_id`, `tenant_id`, `question_hash`,
`plan_hash`, query type and entity, `template`, `sql_fingerprints`, the
verdict (`outcome`, `failed`, and `drift`: checks that failed on an earlier
attempt that was retried), the request's `status` (or `error_code`), counts and
`elapsed_ms`. The question text is added only when `QDSL_AUDIT_TEXT=1`.

Nothing a tenant would not want in a log is written: no filter values, no row
data, no values of sensitive fields. The guarantee is structural: only
whitelisted keys with scalar (or list-of-scalar) values are kept; anything
else is dropped and its key named in `dropped`.

Where lines go (`default_sink()`): a rotating JSONL file in the state dir
(`<state>/audit/audit.jsonl`, rotated at 10 MB, 5 kept; `qdsl audit tail`
reads it), plus `QDSL_AUDIT_LOG=<path>` or `stderr` when set. Never stdout:
with `--json` stdout holds the envelope alone. `QDSL_AUDIT=off` turns the
state-dir file off. A sink whose `stages` is true (MemorySink, for tests and
embedding hosts) also gets one line per pipeline stage, keyed by trace_id.

Cost: stage fields are folded into the summary with a few dict operations;
JSON is rendered once per request, for a summary-only sink no stage line is
ever built, and for a sink that discards lines (NullSink) nothing is rendered.
The file sink writes each line with one `write(2)` and a `stat(2)`: nothing is
buffered in the process, so nothing is lost when it exits.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO

from qdsl.dsl.config import STATE_ROOT_ENV, environ_key, getenv
from qdsl.dsl.errors import QdslError
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
        # an LLM planner attempt's cost (qdsl.planner.llm)
        "input_tokens",
        "output_tokens",
        "prompt_chars",
        "fallback",
        "attempt_outcome",
        "attempt_error_codes",
        "attempt_elapsed_ms",
        # the summary's own
        "tenant_id",
        "question_hash",
        "drift",
        "question",
    }
)
_SCALARS = (str, int, float, bool, type(None))
# The exact types almost every value has: one set lookup instead of isinstance
# (subclasses such as a StrEnum member still pass, through isinstance).
_PLAIN = frozenset(_SCALARS)
# Stage fields the summary keeps (the last value a stage gave wins).
_SUMMARY_KEYS = frozenset(
    {
        "route_mode",
        "language",
        "planner",
        "plan_hash",
        "query_type",
        "entity_type",
        "answer_contract",
        "filter_fields",
        "template",
        "sql_fingerprints",
        "row_count",
        "evidence_count",
        "used_fallback",
        "outcome",
        "failed",
        "kind",
        # the LLM planner's attempts: what planning cost
        "fallback",
        "attempt_error_codes",
        "attempt_elapsed_ms",
        "input_tokens",
        "output_tokens",
    }
)
ROTATE_BYTES = 10 * 1024 * 1024
ROTATE_KEEP = 5
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


class FileSink:
    """Appends to a file (created 0600)."""

    stages = False

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def write(self, line: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # One write of one line: concurrent processes do not interleave lines.
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)


class RotatingFileSink:
    """Appends to a file (0600) and renames it to `.1` (… `.keep`) past `max_bytes`.

    The file stays open between writes (a server writes many); each write is
    one `write(2)` of one line with O_APPEND, so processes do not interleave
    lines. Rotation happens under an exclusive lock on `<file>.lock` after
    re-checking the size, so two writers past the limit rotate once; a writer
    whose file was rotated by another process notices (the inode changed) and
    reopens.
    """

    stages = False

    def __init__(
        self, path: str | os.PathLike[str], max_bytes: int = ROTATE_BYTES, keep: int = ROTATE_KEEP
    ) -> None:
        self.path = Path(path)
        self.max_bytes, self.keep = max_bytes, keep
        self._fd: int | None = None
        self._ino = -1

    def _open(self) -> tuple[int, int]:
        """The open file and its size, reopened when another process rotated it
        (the path's inode changed): one stat(2) per line."""
        if self._fd is not None:
            try:
                st = os.stat(self.path)
                if st.st_ino == self._ino:
                    return self._fd, st.st_size
            except FileNotFoundError:
                pass
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(self._fd)
        self._ino = st.st_ino
        return self._fd, st.st_size

    def write(self, line: str) -> None:
        fd, size = self._open()
        data = (line + "\n").encode("utf-8")
        os.write(fd, data)
        if size + len(data) > self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        import fcntl

        with open(f"{self.path}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not self.path.exists() or self.path.stat().st_size <= self.max_bytes:
                    return  # another process rotated it meanwhile
                for n in range(self.keep - 1, 0, -1):
                    older = Path(f"{self.path}.{n}")
                    if older.exists():
                        older.replace(f"{self.path}.{n + 1}")
                self.path.replace(f"{self.path}.1")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()


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
    """The state dir's audit file (`qdsl audit tail` reads it)."""
    from qdsl.facts.engines import state_dir

    folder = state_dir() / "audit"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / AUDIT_FILE


# Sinks per configuration (state dir, QDSL_AUDIT, QDSL_AUDIT_LOG): a process
# answering many questions keeps one open audit file instead of one per request.
_SINKS: dict[tuple[object, ...], AuditSink] = {}
_SINK_ENV = ("QDSL_AUDIT", "QDSL_AUDIT_LOG")


def _sink_key() -> tuple[str | None, ...]:
    # environ_key over what locates the state dir and the audit settings, read
    # per request; with QDSL_STATE_DIR set, the platform's HOME and
    # XDG_STATE_HOME do not matter (dsl.config.state_root), so they are not read.
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
        # no usable state dir: the extra target below may still hold the log
        with suppress(OSError, QdslError):
            sinks.append(RotatingFileSink(audit_path()))
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


_DROP = object()


def _clean(value: Any) -> Any:
    if type(value) in _PLAIN or isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    return _DROP


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def plan_hash(plan: Plan) -> str:
    return plan.digest()


def plan_shape(plan: Plan, digest: str | None = None) -> dict[str, Any]:
    """The plan as the log may see it: names and operators, never values.
    `digest`: the plan's hash when the caller already has it."""
    return {
        "plan_hash": digest or plan.digest(),
        "query_type": plan.query_type.value,
        "entity_type": plan.entity_type,
        "filter_fields": [f.field for f in plan.filters],
        "operators": [f.operator.value for f in plan.filters],
        "filter_count": len(plan.filters),
    }


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# the last whole second seen and its text; one tuple, so threads read a pair
_SECOND: list[tuple[int, str]] = [(-1, "")]


def timestamp() -> str:
    """Now, as `datetime.now(UTC).isoformat(timespec="milliseconds")` prints it.

    The date and time of day are formatted once per second; a line adds only
    its milliseconds (formatting a datetime was a tenth of the summary's cost)."""
    second, milli = divmod(time.time_ns() // 1_000_000, 1000)
    cached = _SECOND[0]
    if cached[0] != second:
        text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        cached = _SECOND[0] = (second, text)
    return f"{cached[1]}.{milli:03d}+00:00"


def _render(stage: str, trace_id: str, fields: dict[str, Any]) -> str:
    event: dict[str, Any] = {
        "timestamp": timestamp(),
        "event": f"qdsl.{stage}",
        "trace_id": trace_id,
        "stage": stage,
    }
    dropped: list[str] = []
    for key, value in fields.items():
        if key not in ALLOWED_KEYS:
            dropped.append(key)
        elif type(value) in _PLAIN:
            event[key] = value
        elif (kept := _clean(value)) is _DROP:
            dropped.append(key)
        else:
            event[key] = kept
    if dropped:
        event["dropped"] = sorted(dropped)
    return _ENCODER.encode(event)


class Audit:
    """The audit trail of one request: stage events folded into one summary line."""

    def __init__(
        self,
        trace_id: str,
        sink: AuditSink | None = None,
        *,
        tenant_id: str | None = None,
        question: str | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.sink = sink if sink is not None else default_sink()
        self._stages = bool(getattr(self.sink, "stages", False))
        self._discards = bool(getattr(self.sink, "discards", False))
        self.tenant_id = tenant_id
        self.question = question
        self._summary: dict[str, Any] = {}
        self._drift: list[str] = []
        self._started = time.perf_counter()
        self._written = False

    def begin(self, tenant_id: str, question: str | None) -> None:
        """Name the request's tenant and question (hashed unless QDSL_AUDIT_TEXT=1)."""
        self.tenant_id, self.question = tenant_id, question
        self._started = time.perf_counter()

    def event(self, stage: str, **fields: Any) -> None:
        """Record a stage; the summary is written when the request ends (`result`)."""
        summary = self._summary
        if stage == "verify" and fields.get("failed"):
            # a failed verdict that a retry may still turn around: contract drift
            self._drift.extend(f for f in fields["failed"] if f not in self._drift)
        for key, value in fields.items():
            if key in _SUMMARY_KEYS:
                summary[key] = value
        if stage == "result":
            self._finish(fields)
            return
        if self._stages:
            self.sink.write(_render(stage, self.trace_id, fields))

    def failed(self, exc: QdslError) -> None:
        """The request ended in an error (policy, plan, database): one summary line."""
        if not self._written:
            self._finish({"status": "error", "error_code": exc.code})

    def _finish(self, fields: dict[str, Any]) -> None:
        if self._written:
            return
        self._written = True
        if self._discards:
            return
        out = dict(self._summary)
        out.update(fields)
        out["tenant_id"] = self.tenant_id
        if self.question:
            out["question_hash"] = _short_hash(self.question)
            if getenv("QDSL_AUDIT_TEXT") == "1":
                out["question"] = self.question
        if self._drift:
            out["drift"] = list(self._drift)
        out.setdefault("elapsed_ms", round((time.perf_counter() - self._started) * 1000, 3))
        self.sink.write(_render("result", self.trace_id, out))

    def timed(self, stage: str, **fields: Any) -> Timed:
        """Emit `stage` when the block ends, with its elapsed_ms and what it added."""
        return Timed(self, stage, fields)


class Timed:
    """`Audit.timed`'s block: a plain context manager, cheaper than a generator's."""

    __slots__ = ("audit", "fields", "stage", "start")

    def __init__(self, audit: Audit, stage: str, fields: dict[str, Any]) -> None:
        self.audit, self.stage, self.fields = audit, stage, fields
        self.start = 0.0

    def __enter__(self) -> dict[str, Any]:
        self.start = time.perf_counter()
        return self.fields

    def __exit__(self, *exc: object) -> None:
        # also when the block raised: the stage ends either way
        self.fields["elapsed_ms"] = round((time.perf_counter() - self.start) * 1000, 3)
        self.audit.event(self.stage, **self.fields)


def read_tail(path: Path, count: int) -> list[dict[str, Any]]:
    """The last `count` events of the audit file (reaching into `.1` when short)."""
    lines: list[str] = []
    for candidate in (path, Path(f"{path}.1")):
        if len(lines) >= count or not candidate.exists():
            continue
        with candidate.open("rb") as fh:
            older = fh.read().decode("utf-8", errors="replace").splitlines()
        lines = older[-(count - len(lines)) :] + lines
    events = []
    for line in lines[-count:]:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut by a crash: skip it, keep the rest
    return events
