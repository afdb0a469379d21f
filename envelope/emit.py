"""Print a success envelope on stdout or an error envelope on stderr.

Every CLI command leaves through here. (The ref store and the size budget of
SPEC 9 hook in at `emit_success`.)
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Sequence
from typing import Any, TextIO

from dsl.errors import QdslError

SCHEMA_VERSION = 1


def new_trace_id() -> str:
    return uuid.uuid4().hex


def success_envelope(
    operation: str,
    data: Any,
    *,
    warnings: Sequence[str] = (),
    next_ops: Sequence[dict[str, Any]] = (),
    trace_id: str | None = None,
) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": True,
        "operation": operation,
        "data": data,
        "warnings": list(warnings),
        "meta": {"traceId": trace_id or new_trace_id(), "next": list(next_ops)},
    }


def error_envelope(operation: str, error: QdslError) -> dict[str, Any]:
    err = error.to_dict()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": False,
        "operation": operation,
        "error": {
            "type": err["type"],
            "subtype": err["subtype"],
            "code": err["code"],
            "message": err["message"],
            "retryable": err["retryable"],
            "hint": err["hint"],
            "details": err["details"],
        },
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def emit_success(
    operation: str,
    data: Any,
    *,
    warnings: Sequence[str] = (),
    next_ops: Sequence[dict[str, Any]] = (),
    trace_id: str | None = None,
    json_mode: bool = True,
    human: str | None = None,
    out: TextIO | None = None,
) -> int:
    stream = out or sys.stdout
    if json_mode:
        env = success_envelope(
            operation, data, warnings=warnings, next_ops=next_ops, trace_id=trace_id
        )
        stream.write(dumps(env) + "\n")
    else:
        for w in warnings:
            sys.stderr.write(f"warning: {w}\n")
        if human is None:
            human = json.dumps(data, ensure_ascii=False, indent=2, default=str)
        stream.write(human + "\n")
    stream.flush()
    return 0


def emit_error(
    operation: str, error: QdslError, *, json_mode: bool = True, err: TextIO | None = None
) -> int:
    stream = err or sys.stderr
    if json_mode:
        stream.write(dumps(error_envelope(operation, error)) + "\n")
    else:
        stream.write(f"error: {error}\n")
    stream.flush()
    return error.exit_code
