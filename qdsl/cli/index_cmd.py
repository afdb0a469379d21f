"""`qdsl index refresh`: build or refresh the text and value indexes from the catalog's tables.

A thin layer over `qdsl.facts.index_refresh.refresh_index`: it parses the
options, calls the service on `--db` (else the embedded demo database) with
`--catalog`, and prints the report through the envelope.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_deployment
from qdsl.dsl.errors import UsageError


def _since(raw: str | None) -> datetime | None:
    if raw is None:
        return None
    try:
        found = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise UsageError(
            "bad_since",
            f"--since {raw!r} is not an ISO 8601 date or timestamp",
            hint="e.g. --since 2026-11-30 or --since 2026-11-30T08:00:00+08:00 (UTC if no offset)",
        ) from None
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found


def _tenants(raw: tuple[str, ...]) -> list[str] | None:
    for tenant in raw:
        if not tenant.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in tenant):
            raise UsageError(
                "bad_tenant",
                "--tenant must not be blank or hold control characters",
                hint="pass the tenant id as stored in the catalog's tenant column",
            )
    return list(raw) or None


def _human(data: dict[str, Any]) -> str:
    lines = []
    for e in data["entities"]:
        lines.append(
            f"{e['entity']}: {e['tenants']} tenant(s), {e['rows']} row(s) read, "
            f"{e['entities_changed']} re-indexed (+{e['grams_added']}/-{e['grams_removed']} "
            f"grams), values +{e['values_added']}/-{e['values_removed']}"
        )
        if e["overflow"]:
            lines.append(f"  not linked (too many values): {', '.join(e['overflow'])}")
    lines.extend(f"{s['entity']}: skipped, {s['reason']}" for s in data["skipped"])
    lines.append("changed" if data["changed"] else "nothing changed")
    return "\n".join(lines)


@click.group("index")
def index_group() -> None:
    """The text index (fallback search) and the per-tenant value index (name linking)."""


@index_group.command("refresh")
@click.option("--entity", help="Only this entity (default: every entity of the catalog).")
@click.option(
    "--since",
    help="Only rows changed at or after this ISO time (entities naming an updated_at column).",
)
@click.option(
    "--tenant",
    "tenants",
    multiple=True,
    help="Only these tenants (repeatable; default: every tenant found in the tables).",
)
@click.pass_context
def refresh_cmd(
    ctx: click.Context, /, entity: str | None, since: str | None, tenants: tuple[str, ...]
) -> None:
    """Build or refresh the indexes of the catalog's tables; a second run changes nothing."""

    def body() -> Outcome:
        from qdsl.facts.index_refresh import refresh_index

        moment, chosen = _since(since), _tenants(tenants)
        # the deployment's engine: without --db the demo's, seeded on first use like
        # every other command's (a fresh state dir has no demo file yet)
        deployment = current_deployment(clock=False)
        try:
            report = refresh_index(
                deployment.engine(), deployment.catalog, entity, moment, tenants=chosen
            )
        finally:
            deployment.close()
        data = report.to_dict()
        return Outcome(data=data, warnings=list(report.warnings), human=_human(data))

    ctx.exit(run_operation("index refresh", body))
