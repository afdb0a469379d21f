"""`refs list` without click: the tenant a ref is read as, and the listing itself.

`qdsl.cli.fast` runs the listing straight from the console script (agents call
it often, so it starts without click and the command table); the click
command in `qdsl.cli.refs_cmds` runs the same body.
"""

from __future__ import annotations

from typing import Any

from qdsl.cli.outcome import Outcome


def reader_tenant(tenant: object) -> str | None:
    """The tenant a ref is read as (None: shared refs only); malformed is a usage error."""
    if tenant is None:
        return None
    from qdsl.dsl.tenant import valid_tenant

    return valid_tenant(tenant)


def list_refs(tenant: str | None) -> Outcome:
    """The live refs `tenant` may read, newest first."""
    from qdsl.envelope.next_ops import next_op, refs_get_op
    from qdsl.envelope.store import open_store

    caller = reader_tenant(tenant)
    refs = list(reversed(open_store().live(tenant=caller)))
    rows = [r.to_json() for r in refs]
    next_ops: list[dict[str, Any]] = []
    if refs:
        newest = refs[0]
        show = ["qdsl", "--json", "refs", "show"]
        if newest.tenant is not None:
            show += ["--tenant", newest.tenant]
        next_ops = [
            refs_get_op(
                newest.ref_id,
                "keys(data)",
                "the top-level keys of the newest ref",
                tenant=newest.tenant,
            ),
            next_op("refs show", [*show, newest.ref_id]),
        ]
    from qdsl.cli.tables import Table, render

    table = Table(("refId", "operation", "bytes", "expires"))
    for r in rows:
        table.add(r["refId"], r["operation"], r["bytes"], r["expiresAt"])
    human = render([table]) if rows else ""
    return Outcome(
        data={"refs": rows, "count": len(rows), "bytes": sum(r.bytes for r in refs)},
        next_ops=next_ops,
        human=human or "(no refs)",
    )
