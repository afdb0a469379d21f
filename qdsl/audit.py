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
JSON is rendered once per request (`qdsl.audit_line`; no copy when every
field is already plain), for a summary-only sink no stage line is
ever built, and for a sink that discards lines (NullSink) nothing is rendered.
The file sink writes each line with one `write(2)` and an `fstat(2)` of the
open file, on the calling thread: nothing is buffered in the process, so a
line is in the file when the request returns and nothing is lost when the
process exits, however it exits. (A writer thread was measured and declined:
rendering holds the GIL on either thread; handing each line to a thread saved
about 2 µs of CPU per line, batching them every 50 ms about 5 µs, at the
price of lines not yet in the file when their request returns, lost to a
crash, a kill or `os._exit`.)
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any

from qdsl.audit_file import ROTATE_BYTES, ROTATE_KEEP, FileSink, RotatingFileSink
from qdsl.audit_line import ALLOWED_KEYS, plan_hash, plan_shape, render, short_hash, timestamp
from qdsl.audit_sinks import (
    AUDIT_DIR,
    AUDIT_FILE,
    AuditSink,
    MemorySink,
    NullSink,
    StreamSink,
    TeeSink,
    audit_path,
    default_sink,
    use_sink,
)
from qdsl.dsl.errors import QdslError, UsageError
from qdsl.dsl.settings.config import getenv

__all__ = ["ROTATE_BYTES", "ROTATE_KEEP", "Audit", "AuditUnwritable", "FileSink"]
__all__ += ["MemorySink", "NullSink", "RotatingFileSink", "StreamSink", "TeeSink"]
__all__ += ["audit_path", "audited_error", "default_sink", "read_tail", "use_sink"]
__all__ += ["ALLOWED_KEYS", "AUDIT_DIR", "AUDIT_FILE", "AuditSink", "plan_hash", "plan_shape"]
__all__ += ["timestamp"]

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


class AuditUnwritable(UsageError):
    """The audit line of a request could not be written: the request gives no result.

    Its envelope carries the trace id of the line that is missing."""

    def __init__(self, cause: OSError | QdslError, trace_id: str) -> None:
        if isinstance(cause, QdslError):
            # the state dir refused (another user's, a symlink): its own words
            reason, hint = cause.message, cause.hint
        else:
            reason = cause.strerror or type(cause).__name__
            hint = _AUDIT_HINTS.get(cause.errno or 0, _AUDIT_HINT)
        super().__init__(
            "audit_unwritable",
            f"the audit log cannot be written ({reason}); qdsl gives no result without "
            "its audit line",
            hint=hint,
            retryable=False,
            details={"errno": getattr(cause, "errno", None)} if isinstance(cause, OSError) else {},
        )
        self.trace_id = trace_id


_AUDIT_HINT = (
    "make the state dir writable (`qdsl refs path` shows it) or point QDSL_STATE_DIR at a "
    "writable directory of your own; with QDSL_AUDIT_LOG set, check that file too"
)
_AUDIT_HINTS = {
    errno.ENOSPC: "free space on the file system of the state dir (`qdsl refs path` shows "
    "it) or of QDSL_AUDIT_LOG, then retry",
    errno.EDQUOT: "free space within your disk quota (the state dir, or QDSL_AUDIT_LOG), "
    "then retry",
    errno.ELOOP: "the audit file in the state dir is a symbolic link, which qdsl does not "
    "follow: remove the link (`qdsl refs path` shows the dir)",
}


def audited_error(
    exc: QdslError,
    *,
    operation: str,
    tenant: str | None = None,
    sink: AuditSink | None = None,
) -> QdslError:
    """The error to report for a failed command or call: `exc` with the trace id of
    its audit line (written now, unless a request inside it already wrote one),
    or, if that line cannot be written, the `AuditUnwritable` fault naming `exc`
    (unless `exc` is the state dir's own fault, the cause of both). Either way
    the trace id is that of the line written, or of the one that could not be."""
    if getattr(exc, "trace_id", None) is not None:
        return exc
    audit = Audit(new_trace_id(), sink, tenant_id=tenant)
    try:
        audit.failed(exc, operation=operation)
    except AuditUnwritable as fault:
        if exc.code in _STATE_DIR_FAULTS:
            # the state dir is the cause of both, and its own error says more
            exc.trace_id = fault.trace_id
            return exc
        return fault
    return exc


_STATE_DIR_FAULTS = frozenset({"usage/state_dir_unusable", "usage/state_dir_unsafe"})


def new_trace_id() -> str:
    # what uuid.uuid4().hex gives callers, without importing uuid
    return os.urandom(16).hex()


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
            self.sink.write(render(stage, self.trace_id, fields))

    def failed(self, exc: QdslError, **fields: Any) -> None:
        """The request ended in an error (policy, plan, database): one summary line,
        whose trace id the error then carries (`exc.trace_id`, its envelope's
        `meta.traceId`). An error an inner request already audited is not
        written again."""
        if self._written or getattr(exc, "trace_id", None) is not None:
            return
        try:
            self._finish({"status": "error", "error_code": exc.code, **fields})
        except AuditUnwritable as fault:
            fault.details["unaudited"] = exc.code
            raise
        exc.trace_id = self.trace_id

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
            out["question_hash"] = short_hash(self.question)
            if getenv("QDSL_AUDIT_TEXT") == "1":
                out["question"] = self.question
        if self._drift:
            out["drift"] = list(self._drift)
        out.setdefault("elapsed_ms", round((time.perf_counter() - self._started) * 1000, 3))
        try:
            self.sink.write(render("result", self.trace_id, out))
        except (OSError, QdslError) as exc:
            # No result leaves without its line: the request fails, typed.
            raise AuditUnwritable(exc, self.trace_id) from None

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
        if len(lines) >= count:
            continue
        try:
            # a symlink in the state dir is never followed (audit_file)
            fd = os.open(candidate, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            continue
        with os.fdopen(fd, "rb") as fh:
            older = fh.read().decode("utf-8", errors="replace").splitlines()
        lines = older[-(count - len(lines)) :] + lines
    events = []
    for line in lines[-count:]:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut by a crash: skip it, keep the rest
    return events
