"""Run one CLI operation and send its outcome through the envelope adapter.

A command body returns an `Outcome` or raises a `QdslError`; anything else it
raises is a defect, reported as `internal/unexpected` without a traceback
(set QDSL_DEBUG=1 to see one on stderr).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import click

from qdsl.cli.state import current_state
from qdsl.dsl.errors import InternalError, QdslError, UsageError


@dataclass
class Outcome:
    data: Any
    warnings: list[str] = field(default_factory=list)
    next_ops: list[dict[str, Any]] = field(default_factory=list)
    human: str | None = None
    trace_id: str | None = None
    # A non-zero exit for a result that is still printed as data (e.g. `verify`
    # printing a failed verdict exits 5 with the verdict on stdout).
    exit_code: int = 0
    # The tenant whose data this is: a result too large to print is stored as
    # a ref readable only with this tenant. None: the command's --tenant.
    tenant: str | None = None


def command_tenant() -> str | None:
    """The running command's `--tenant` (every command spells it so), if any."""
    ctx = click.get_current_context(silent=True)
    value = ctx.params.get("tenant") if ctx is not None else None
    return value if isinstance(value, str) else None


# Set by `qdsl chain`: run_operation hands the Outcome (or raises the error)
# to the chain instead of printing, so steps run the same command bodies.
CAPTURE: ContextVar[list[Outcome] | None] = ContextVar("qdsl_capture", default=None)


def run_operation(operation: str, body: Callable[[], Outcome]) -> int:

    captured = CAPTURE.get()
    if captured is not None:
        outcome = body()
        if outcome.tenant is None:
            outcome.tenant = command_tenant()
        captured.append(outcome)
        return outcome.exit_code
    from qdsl.envelope.backends import deployment_database

    # The command's --db is the default database of a postgresql ref store.
    with deployment_database(current_state().db_url):
        return _run_and_emit(operation, body)


def _run_and_emit(operation: str, body: Callable[[], Outcome]) -> int:
    from qdsl.envelope import emit_error, emit_success
    from qdsl.envelope.store import collect_at_start

    collect_at_start()
    state = current_state()
    try:
        outcome = body()
    except QdslError as exc:
        return emit_error(operation, exc, json_mode=state.json_mode)
    except Exception as exc:
        return emit_error(operation, _unexpected(exc), json_mode=state.json_mode)
    code = emit_success(
        operation,
        outcome.data,
        warnings=outcome.warnings,
        next_ops=outcome.next_ops,
        trace_id=outcome.trace_id,
        json_mode=state.json_mode,
        human=outcome.human,
        tenant=command_tenant() if outcome.tenant is None else outcome.tenant,
    )
    return outcome.exit_code or code


def usage_failure(exc: click.ClickException, *, json_mode: bool) -> int:
    from qdsl.envelope import emit_error

    ctx = getattr(exc, "ctx", None)
    operation = ctx.command_path.removeprefix("qdsl").strip() if ctx is not None else ""
    err = UsageError(
        "bad_arguments",
        exc.format_message(),
        hint=f"see `{ctx.command_path if ctx else 'qdsl'} --help`",
    )
    return emit_error(operation or "qdsl", err, json_mode=json_mode)


def _unexpected(exc: Exception) -> InternalError:
    if os.environ.get("QDSL_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
    return InternalError(
        "unexpected",
        f"qdsl failed unexpectedly ({type(exc).__name__})",
        hint="this is a defect in qdsl; rerun with QDSL_DEBUG=1 and report the traceback",
    )


def internal_failure(exc: Exception, *, json_mode: bool) -> int:
    from qdsl.envelope import emit_error

    return emit_error("qdsl", _unexpected(exc), json_mode=json_mode)
