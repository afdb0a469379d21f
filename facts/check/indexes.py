"""The text and value indexes of the catalog's entities: missing or older than the rows.

The findings are `qdsl.facts.index_refresh.index_findings`, the one place
that knows how an index records its state; this rule names each index (the
text index of an entity and the columns it covers, or the value index of one
field) and reports one finding per index and state, listing the tenants it
holds for, so a deployment of many tenants reads as a few actionable lines.
"""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog
from qdsl.facts.check.findings import CheckContext, Finding, Level


def index_name(catalog: Catalog, entity: str, kind: str, field: str | None) -> str:
    if kind == "values" and field:
        return f"value index of {entity}.{field}"
    spec = catalog.entities.get(entity)
    columns = ", ".join(spec.text_search) if spec is not None else ""
    return f"text index of {entity} ({columns})" if columns else f"text index of {entity}"


def indexes(ctx: CheckContext) -> list[Finding]:
    from qdsl.facts.index_refresh import index_findings

    grouped: dict[tuple[str, str, str, str | None, str, str, str], list[str]] = {}
    for f in index_findings(ctx.engine, ctx.catalog):
        key = (f.level, f.code, f.entity, f.field, f.index, f.message, f.fix)
        grouped.setdefault(key, []).append(f.tenant)
    out = []
    for (level, code, entity, field, kind, message, fix), tenants in grouped.items():
        name = index_name(ctx.catalog, entity, kind, field)
        who = ", ".join(repr(t) for t in tenants)
        out.append(
            Finding(
                "indexes",
                Level(level),
                f"{name}: {message} (tenant{'s' if len(tenants) > 1 else ''} {who})",
                fix=f"run `{fix}`",
                entity=entity,
                details={
                    "code": code,
                    "index": kind,
                    "name": name,
                    "field": field,
                    "tenants": tenants,
                },
            )
        )
    return out
