"""Print a success envelope on stdout or an error envelope on stderr.

Every CLI command leaves through here. A result whose printed form is over
the budget (docs/envelopes.md) is first persisted in the ref store, then a preview led
by `refId` is printed; the printed envelope always parses and fits. The store
holds the full envelope byte for byte as it would have been printed (with its
newline), so `outputBytes` equals the stored size and `sha256` its digest. Bytes are
written to the binary stream, so what is counted is exactly what is printed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from qdsl.dsl.errors import QdslError
from qdsl.envelope.encode import dumps, encode_line, stdout_bytes

if TYPE_CHECKING:
    from qdsl.envelope.budget import RefFields
    from qdsl.envelope.ref_api import RefStoreProtocol
    from qdsl.envelope.settings import IoSettings

SCHEMA_VERSION = 1

__all__ = ["dumps", "emit_error", "emit_success", "error_envelope", "success_envelope"]


def new_trace_id() -> str:
    # what secrets.token_hex(16) returns, without loading `secrets` (hmac, random)
    # into every command's start-up
    return os.urandom(16).hex()


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
        # the audit line that recorded the error (qdsl.audit.audited_error)
        "meta": {"traceId": error.trace_id},
    }


def _write(stream: TextIO, text: str) -> None:
    _write_bytes(stream, (text + "\n").encode("utf-8", errors="backslashreplace"))


def _write_bytes(stream: TextIO, data: bytes) -> None:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8"))
        stream.flush()


def _warn(text: str) -> None:
    sys.stderr.write(f"qdsl: warning: {text}\n")
    sys.stderr.flush()


def _settings() -> IoSettings:
    from qdsl.envelope.settings import IoSettings, io_settings

    try:
        return io_settings()
    except QdslError as exc:
        # A bad setting must not eat the result: print it whole, say why.
        _warn(f"{exc.message}; using defaults")
        return IoSettings()


def persist(
    operation: str,
    payload: bytes,
    output_bytes: int,
    budget: int,
    *,
    store: RefStoreProtocol | None,
    warnings: list[str],
    tenant: str | None = None,
) -> RefFields:
    """Store the full envelope; on failure say so on stderr and degrade."""
    import hashlib

    from qdsl.envelope.budget import RefFields
    from qdsl.envelope.store import StoreWriteError, iso_ms, open_store

    try:
        store = store or open_store()
        record = store.put(operation, payload, tenant=tenant)
    except (StoreWriteError, OSError, QdslError) as exc:
        reason = exc.message if isinstance(exc, QdslError) else str(exc)
        _warn(f"could not persist the large result ({reason}); printing an incomplete preview")
        warnings.append(f"result not persisted ({reason}); the preview is incomplete")
        sha = hashlib.sha256(payload).hexdigest()
        return RefFields(None, False, output_bytes, sha, None, budget, reason)
    warnings.extend(store.gc().warnings)
    expires = iso_ms(record.expires_ms)
    # the record's sha256 is the payload's (ref_api.new_record): not hashed twice
    return RefFields(
        record.ref_id, True, output_bytes, record.sha256, expires, budget, tenant=tenant
    )


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
    store: RefStoreProtocol | None = None,
    settings: IoSettings | None = None,
    tenant: str | None = None,
) -> int:
    stream = out or sys.stdout
    budget = (settings or _settings()).threshold
    env = success_envelope(operation, data, warnings=warnings, next_ops=next_ops, trace_id=trace_id)
    if json_mode:
        payload = encode_line(env)
        if budget == 0 or len(payload) <= budget:
            _write_bytes(stream, payload)
            return 0
        env_warnings = list(env["warnings"])
        from qdsl.envelope.budget import large_envelope

        ref = persist(
            operation,
            payload,
            len(payload),
            budget,
            store=store,
            warnings=env_warnings,
            tenant=tenant,
        )
        _write(stream, large_envelope({**env, "warnings": env_warnings}, ref, budget))
        return 0

    for w in warnings:
        _warn(w)
    if human is None:
        human = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    if budget == 0 or stdout_bytes(human) <= budget:
        _write(stream, human)
        return 0
    extra: list[str] = []
    ref = persist(
        operation,
        encode_line(env),
        stdout_bytes(human),
        budget,
        store=store,
        warnings=extra,
        tenant=tenant,
    )
    for w in extra:
        _warn(w)
    notice = "\n… " + ref.notice()
    room = max(budget - stdout_bytes(notice) - 8, 0)
    head = human.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    _write(stream, head + notice)
    return 0


def emit_error(
    operation: str, error: QdslError, *, json_mode: bool = True, err: TextIO | None = None
) -> int:
    stream = err or sys.stderr
    if json_mode:
        env = error_envelope(operation, error)
        text = dumps(env)
        budget = _settings().threshold
        if budget and stdout_bytes(text) > budget:
            text = _compact_error(env, budget)
        _write(stream, text)
    else:
        _write(stream, f"error: {error}")
    return error.exit_code


def _compact_error(env: dict[str, Any], budget: int) -> str:
    from qdsl.envelope.compact import LEVELS, compact

    for lim in LEVELS:
        err = compact(env["error"], lim)
        text = dumps({**env, "error": err})
        if stdout_bytes(text) <= budget:
            return text
    err = {k: env["error"][k] for k in ("type", "subtype", "code", "retryable")}
    return dumps({**env, "error": {**err, "message": "", "hint": None, "details": {}}})
