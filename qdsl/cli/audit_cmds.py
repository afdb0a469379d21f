"""`qdsl audit tail`: the latest audit events of the state dir's log (qdsl.audit)."""

from __future__ import annotations

from typing import Any

import click

from qdsl.cli.runner import Outcome, run_operation


@click.group("audit")
def audit_group() -> None:
    """The audit log: one event per request (answered, refused, gated, error)."""


def _line(event: dict[str, Any]) -> str:
    verdict = event.get("outcome") or "-"
    failed = ",".join(event.get("failed") or [])
    parts = [
        str(event.get("timestamp", "")),
        str(event.get("trace_id", ""))[:12],
        str(event.get("tenant_id") or "-"),
        str(event.get("status") or "-"),
        f"{event.get('query_type') or '-'}/{event.get('entity_type') or '-'}",
        str(event.get("template") or "-"),
        f"verdict={verdict}" + (f" failed={failed}" if failed else ""),
    ]
    if event.get("error_code"):
        parts.append(f"error={event['error_code']}")
    if event.get("drift"):
        parts.append("drift=" + ",".join(event["drift"]))
    return "  ".join(parts)


@audit_group.command("tail")
@click.option("-n", "--lines", "count", type=click.IntRange(1, 10_000), default=20,
              show_default=True, help="How many of the latest events.")
@click.option("--tenant", default=None, help="Only this tenant's events.")
@click.pass_context
def tail_cmd(ctx: click.Context, /, count: int, tenant: str | None) -> None:
    """Show the latest audit events (oldest first)."""

    def body() -> Outcome:
        from qdsl.audit import audit_path, read_tail

        events = read_tail(audit_path(), count if tenant is None else 10_000)
        if tenant is not None:
            events = [e for e in events if e.get("tenant_id") == tenant][-count:]
        return Outcome(
            data={"events": events},
            human="\n".join(_line(e) for e in events) or "no audit events yet",
        )

    ctx.exit(run_operation("audit tail", body))
