"""Run one CLI operation and send its outcome through the envelope adapter.

A command body returns an `Outcome` or raises a `QdslError`; anything else it
raises is a defect, reported as `internal/unexpected` without a traceback
(set QDSL_DEBUG=1 to see one on stderr).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

import click

from qdsl.cli.outcome import Outcome, deliver, fail, unexpected
from qdsl.cli.state import current_state
from qdsl.dsl.errors import UsageError

__all__ = [
    "CAPTURE",
    "Outcome",
    "command_tenant",
    "internal_failure",
    "run_operation",
    "usage_failure",
]


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

    state = current_state()
    # The command's --db is the default database of a postgresql ref store.
    with deployment_database(state.db_url):
        return deliver(operation, body, json_mode=state.json_mode, tenant=command_tenant())


def usage_failure(exc: click.ClickException, *, json_mode: bool) -> int:
    ctx = getattr(exc, "ctx", None)
    operation = ctx.command_path.removeprefix("qdsl").strip() if ctx is not None else ""
    err = UsageError(
        "bad_arguments",
        exc.format_message(),
        hint=f"see `{ctx.command_path if ctx else 'qdsl'} --help`",
    )
    return fail(operation or "qdsl", err, json_mode=json_mode)


def internal_failure(exc: Exception, *, json_mode: bool) -> int:
    return fail("qdsl", unexpected(exc), json_mode=json_mode)
