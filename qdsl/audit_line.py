"""One audit line: what the log may hold (`ALLOWED_KEYS`) and its JSON (`render`).

Only whitelisted keys with scalar (or list-of-scalar) values are kept; anything
else is dropped and its key named in `dropped`. JSON is rendered with one
`json.JSONEncoder` made at import, and without a copy of the fields when every
one of them is already plain (the common case).
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime
from typing import Any

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
        "operation",
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


_DROP = object()


def _clean(value: Any) -> Any:
    if type(value) in _PLAIN or isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    return _DROP


def short_hash(text: str) -> str:
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


# No circular-reference check: what is encoded holds only scalars and lists of
# scalars (`render`).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_encode = _ENCODER.encode
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


def render(stage: str, trace_id: str, fields: dict[str, Any]) -> str:
    head: dict[str, Any] = {
        "timestamp": timestamp(),
        "event": f"qdsl.{stage}",
        "trace_id": trace_id,
        "stage": stage,
    }
    if _all_plain(fields):
        # the common case: nothing to drop or copy, so the fields go in as they are
        return _encode({**head, **fields})
    event = head
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
    return _encode(event)


def _all_plain(fields: dict[str, Any]) -> bool:
    """Every key whitelisted and every value a plain scalar or a list of them:
    what `render`'s field by field cleaning would keep unchanged."""
    if not ALLOWED_KEYS.issuperset(fields):
        return False
    for value in fields.values():
        kind = type(value)
        if kind not in _PLAIN and (kind is not list or not _PLAIN.issuperset(map(type, value))):
            return False
    return True
