"""A command's outcome and its delivery through the envelope adapter, without click.

`runner.run_operation` delivers for the click commands; `cli.fast` delivers
`refs list` directly, so that command starts without loading click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from qdsl.dsl.errors import InternalError, QdslError


class Outcome:
    """What a command produced. (A plain class: `dataclasses`, with `inspect`,
    would be the heaviest import of `refs list`'s start-up.)"""

    def __init__(
        self,
        data: Any,
        *,
        warnings: list[str] | None = None,
        next_ops: list[dict[str, Any]] | None = None,
        human: str | None = None,
        trace_id: str | None = None,
        exit_code: int = 0,
        tenant: str | None = None,
    ) -> None:
        self.data = data
        self.warnings = [] if warnings is None else warnings
        self.next_ops = [] if next_ops is None else next_ops
        self.human = human
        self.trace_id = trace_id
        # A non-zero exit for a result that is still printed as data (e.g. `verify`
        # printing a failed verdict exits 5 with the verdict on stdout).
        self.exit_code = exit_code
        # The tenant whose data this is: a result too large to print is stored as
        # a ref readable only with this tenant. None: the command's --tenant.
        self.tenant = tenant

    def __repr__(self) -> str:
        return f"Outcome({vars(self)})"


def unexpected(exc: Exception) -> InternalError:
    if os.environ.get("QDSL_DEBUG"):
        import traceback  # only for a defect, and only when asked: start-up stays light

        traceback.print_exception(exc, file=sys.stderr)
    return InternalError(
        "unexpected",
        f"qdsl failed unexpectedly ({type(exc).__name__})",
        hint="this is a defect in qdsl; rerun with QDSL_DEBUG=1 and report the traceback",
    )


def fail(operation: str, error: QdslError, *, json_mode: bool, tenant: str | None = None) -> int:
    """Print `error`'s envelope, whose `meta.traceId` names its audit line (written
    here unless the request wrote it already); the exit code."""
    from qdsl.audit import audited_error
    from qdsl.envelope import emit_error

    reported = audited_error(error, operation=operation, tenant=tenant)
    return emit_error(operation, reported, json_mode=json_mode)


def deliver(
    operation: str, body: Callable[[], Outcome], *, json_mode: bool, tenant: str | None
) -> int:
    """Collect expired refs, run `body` and print its outcome or its error; the exit code.

    `tenant` is the command's --tenant, which owns a stored result unless the
    outcome names its own."""
    from qdsl.envelope import emit_success
    from qdsl.envelope.store import collect_at_start

    collect_at_start()
    try:
        outcome = body()
    except QdslError as exc:
        return fail(operation, exc, json_mode=json_mode, tenant=tenant)
    except Exception as exc:
        return fail(operation, unexpected(exc), json_mode=json_mode, tenant=tenant)
    code = emit_success(
        operation,
        outcome.data,
        warnings=outcome.warnings,
        next_ops=outcome.next_ops,
        trace_id=outcome.trace_id,
        json_mode=json_mode,
        human=outcome.human,
        tenant=tenant if outcome.tenant is None else outcome.tenant,
    )
    return outcome.exit_code or code
