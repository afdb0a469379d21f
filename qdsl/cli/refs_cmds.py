"""`qdsl refs path|list|show|get|prune`: the ref store (docs/envelopes.md).

`refs path` is the one command that prints an absolute path. A ref made for
a tenant is listed and read only with the same `--tenant`; to anyone else it
does not exist (`ref/ref_not_found`). Refs made without a tenant are shared.
"""

from __future__ import annotations

import re
from typing import Any

import click

from qdsl.cli.refs_listing import list_refs, reader_tenant
from qdsl.cli.runner import Outcome, run_operation
from qdsl.dsl.errors import RefError, UsageError

_DURATION = re.compile(r"\s*(\d+)\s*(ms|s|m|h|d|w)\s*\Z")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}

tenant_option = click.option(
    "--tenant",
    metavar="ID",
    help="The caller's tenant: refs made for it (and refs made without one) are readable.",
)


def parse_duration_ms(text: str) -> int:
    m = _DURATION.match(text.lower())
    if m is None:
        raise UsageError(
            "bad_duration",
            f"not a duration: {text!r}",
            hint="write a number and a unit: 30m, 12h, 7d (units ms, s, m, h, d, w)",
        )
    return int(m.group(1)) * _UNIT_MS[m.group(2)]


@click.group("refs")
def refs_group() -> None:
    """The ref store: large results kept for a while (see docs/envelopes.md)."""


@refs_group.command("path")
@click.pass_context
def path_cmd(ctx: click.Context) -> None:
    """Print where the ref store lives (the only absolute path qdsl prints);
    for the postgresql store, its database (password hidden) and table."""

    def body() -> Outcome:
        from qdsl.envelope.settings import io_settings, state_dir

        root = state_dir()
        refs = root / "refs"
        data = {"stateDir": str(root), "refsDir": str(refs), "index": str(refs / "index.jsonl")}
        settings = io_settings()
        if settings.ref_store == "file":
            return Outcome(data={**data, "backend": "file"}, human=str(refs))
        from qdsl.envelope.backends import ref_store_url
        from qdsl.facts.engines import display_url
        from qdsl.facts.tables import REF_TABLE_NAME

        where = display_url(ref_store_url(settings))
        return Outcome(
            data={**data, "backend": "postgresql", "database": where, "table": REF_TABLE_NAME},
            human=f"{where} (table {REF_TABLE_NAME})",
        )

    ctx.exit(run_operation("refs path", body))


@refs_group.command("list")
@tenant_option
@click.pass_context
def list_cmd(ctx: click.Context, tenant: str | None) -> None:
    """List the live refs this tenant may read, newest first."""
    ctx.exit(run_operation("refs list", lambda: list_refs(tenant)))


@refs_group.command("show")
@click.argument("ref_id", metavar="REF")
@tenant_option
@click.pass_context
def show_cmd(ctx: click.Context, ref_id: str, tenant: str | None) -> None:
    """Print a small stored result whole; a large one is refused (use `refs get`)."""

    def body() -> Outcome:
        from qdsl.envelope.encode import dumps, stdout_bytes
        from qdsl.envelope.jmes import search
        from qdsl.envelope.next_ops import refs_get_op
        from qdsl.envelope.settings import io_settings
        from qdsl.envelope.store import open_store

        store = open_store()
        record, document = store.load_json(ref_id, tenant=reader_tenant(tenant))
        data = {"ref": record.to_json(), "envelope": document}
        budget = io_settings().threshold
        tenant_arg = f" --tenant {record.tenant}" if record.tenant is not None else ""
        if budget and stdout_bytes(dumps(data)) + 512 > budget:
            keys = search("keys(data)", document) if isinstance(document, dict) else None
            raise UsageError(
                "ref_too_large",
                f"ref {record.ref_id} holds {record.bytes} bytes, over the {budget}-byte "
                "output budget; `refs show` prints only small results",
                hint=f"read a part: qdsl --json refs get{tenant_arg} {record.ref_id} 'data'"
                " (any JMESPath, e.g. 'data.items[0]' or 'keys(data)')",
                details={"ref": record.to_json(), "dataKeys": keys},
            )
        return Outcome(data=data, next_ops=[refs_get_op(record.ref_id, tenant=record.tenant)])

    ctx.exit(run_operation("refs show", body))


@refs_group.command("get")
@click.argument("ref_id", metavar="REF")
@click.argument("expr", metavar="EXPR", default="data")
@tenant_option
@click.pass_context
def get_cmd(ctx: click.Context, ref_id: str, expr: str, tenant: str | None) -> None:
    """Evaluate a JMESPath expression (default `data`) over a stored envelope."""

    def body() -> Outcome:
        return op_refs_get({"ref": ref_id, "expr": expr, "tenant": tenant})

    ctx.exit(run_operation("refs get", body))


def op_refs_get(inputs: dict[str, Any]) -> Outcome:
    """`refs get` as a chain operation: {"ref": ID, "expr": JMESPath, "tenant": T}.

    What is read from a tenant's ref stays that tenant's: the outcome carries
    the ref's tenant, so a result too large to print is stored for it alone.
    """
    from qdsl.envelope.jmes import search
    from qdsl.envelope.ref_api import result_room
    from qdsl.envelope.store import open_store

    unknown = set(inputs) - {"ref", "expr", "tenant"}
    if unknown:
        raise UsageError(
            "unknown_input",
            f"refs get has no input {sorted(unknown)[0]!r}",
            hint="inputs: expr, ref, tenant",
        )
    ref_id = inputs.get("ref")
    if not isinstance(ref_id, str):
        raise UsageError("missing_ref", "refs get needs a ref id", hint='{"ref": "r2026..."}')
    expr = inputs.get("expr") or "data"
    if not isinstance(expr, str):
        raise UsageError("bad_expression", "expr must be a string", hint="e.g. data.items[0]")
    store = open_store()
    record, document = store.load_json(ref_id, tenant=reader_tenant(inputs.get("tenant")))
    # what is read may be stored again for the ref's tenant (over the output budget)
    value = search(expr, document, document_bytes=record.bytes, store_bytes=result_room(store))
    warnings = [] if value is not None else [f"{expr!r} selects nothing in ref {record.ref_id}"]
    return Outcome(
        data={"refId": record.ref_id, "expr": expr, "value": value},
        warnings=warnings,
        tenant=record.tenant,
    )


@refs_group.command("prune")
@click.option("--older-than", "older_than", metavar="AGE", help="Remove refs older than AGE (7d).")
@click.option("--all", "prune_all", is_flag=True, help="Remove every ref of the caller.")
@click.option(
    "--tenant",
    metavar="ID",
    help="Remove the refs made for this tenant; without it, the refs made without a tenant.",
)
@click.pass_context
def prune_cmd(
    ctx: click.Context, older_than: str | None, prune_all: bool, tenant: str | None
) -> None:
    """Remove the caller's refs before their TTL: `--older-than 7d` or `--all`.

    With `--tenant T` only refs made for T go; without it only the shared refs
    (made without a tenant). Other tenants' refs are never touched.
    """

    def body() -> Outcome:
        from qdsl.envelope.store import open_store

        owner = reader_tenant(tenant)
        if (older_than is None) == (not prune_all):
            raise UsageError(
                "bad_arguments",
                "give exactly one of --older-than AGE and --all",
                hint="qdsl refs prune --older-than 7d   or   qdsl refs prune --all",
            )
        store = open_store()
        cutoff = None if older_than is None else store.clock() - parse_duration_ms(older_than)
        report = store.gc(prune_before_ms=cutoff, prune_all=prune_all, prune_tenant=owner)
        remaining = sum(1 for r in store.records() if r.tenant == owner)
        if report.unpruned:
            # what was asked is not done: the refs that could not go are still there
            raise RefError(
                "prune_failed",
                f"removed {report.pruned} ref(s); {report.unpruned} could not be removed",
                hint="make the state dir writable (`qdsl refs path` shows it), then prune "
                "again",
                details={
                    "removed": report.pruned,
                    "failed": report.unpruned,
                    "remaining": remaining,
                    "reasons": report.warnings,
                },
            )
        return Outcome(
            data={"removed": report.pruned, "remaining": remaining},
            warnings=report.warnings,
            human=f"removed {report.pruned} refs, {remaining} remain",
        )

    ctx.exit(run_operation("refs prune", body))
