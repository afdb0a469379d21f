"""The text and value indexes of the catalog's entities: missing or older than the rows.

The findings are `qdsl.facts.index_refresh.index_findings`, the one place
that knows how an index records its state; this rule only carries them over.
"""

from __future__ import annotations

from qdsl.facts.check.findings import CheckContext, Finding, Level


def indexes(ctx: CheckContext) -> list[Finding]:
    from qdsl.facts.index_refresh import index_findings

    return [
        Finding(
            "indexes",
            Level(f.level),
            f"{f.message} (tenant {f.tenant!r})",
            fix=f"run `{f.fix}`",
            entity=f.entity,
            details={"code": f.code, "tenant": f.tenant, "index": f.index, "field": f.field},
        )
        for f in index_findings(ctx.engine, ctx.catalog)
    ]
