"""`qdsl audit tail`: the latest audit events of the state dir's log (qdsl.audit)."""

from __future__ import annotations

from typing import Any

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.tables import Table, render
from qdsl.dsl.errors import UsageError


@click.group("audit")
def audit_group() -> None:
    """The audit log: one event per request (answered, refused, gated, error)."""


def _table(events: list[dict[str, Any]]) -> Table:
    table = Table(("time", "trace", "tenant", "status", "plan", "template", "verdict", "note"))
    for e in events:
        note = [f"error={e['error_code']}"] if e.get("error_code") else []
        if e.get("failed"):
            note.append("failed=" + ",".join(e["failed"]))
        if e.get("drift"):
            note.append("drift=" + ",".join(e["drift"]))
        table.add(
            e.get("timestamp"),
            str(e.get("trace_id", ""))[:12],
            e.get("tenant_id"),
            e.get("status"),
            f"{e.get('query_type') or '-'} {e.get('entity_type') or '-'}",
            e.get("template"),
            e.get("outcome"),
            " ".join(note),
        )
    return table


@audit_group.command("tail")
@click.option(
    "-n",
    "--lines",
    "count",
    type=click.IntRange(1, 10_000),
    default=20,
    show_default=True,
    help="How many of the latest events.",
)
@click.option("--tenant", default=None, help="Only this tenant's events.")
@click.pass_context
def tail_cmd(ctx: click.Context, /, count: int, tenant: str | None) -> None:
    """Show the latest audit events (oldest first)."""

    def body() -> Outcome:
        from qdsl.audit import AUDIT_DIR, AUDIT_FILE, read_tail
        from qdsl.dsl.settings.private_dir import private_child

        # the state dir checked as for writing (the user's own, no symlink), not created
        folder = private_child(AUDIT_DIR, create=False)
        try:
            events = read_tail(folder / AUDIT_FILE, count if tenant is None else 10_000)
        except OSError as exc:
            raise UsageError(
                "audit_unreadable",
                f"cannot read the audit log ({exc.strerror or type(exc).__name__})",
                hint="the audit log is audit/audit.jsonl in the state dir (`qdsl refs path`): "
                "a regular file of your own, never a symbolic link",
                retryable=False,
            ) from None
        if tenant is not None:
            events = [e for e in events if e.get("tenant_id") == tenant][-count:]
        return Outcome(
            data={"events": events},
            human=render([_table(events)]) if events else "no audit events yet",
        )

    ctx.exit(run_operation("audit tail", body))
