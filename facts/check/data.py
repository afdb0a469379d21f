"""What the rows hold: enum values the catalog does not list, ids repeated in a tenant.

Read with the connecting user's rights; on PostgreSQL under forced row-level
security a user without BYPASSRLS sees no rows, which `visibility` reports.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from qdsl.dsl.catalog import FieldType
from qdsl.facts.check.findings import CheckContext, Finding, Level

# Enough distinct values to name the problem without reading a free-text column whole.
MAX_DISTINCT = 200
MAX_EXAMPLES = 5


def enum_values(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    with ctx.engine.connect() as conn:
        for name, e in ctx.catalog.entities.items():
            columns = ctx.columns(e.table) or {}
            for fname, f in e.fields.items():
                if f.type is not FieldType.ENUM or f.column not in columns:
                    continue
                col: sa.ColumnClause[Any] = sa.column(f.column)
                query = (
                    sa.select(col)
                    .select_from(sa.table(e.table))
                    .where(col.is_not(None))
                    .distinct()
                    .limit(MAX_DISTINCT + 1)
                )
                seen = [str(v) for v in conn.execute(query).scalars()]
                unlisted = sorted(set(seen) - set(f.values))
                if not unlisted:
                    continue
                key = f"entities.{name}.fields.{fname}.values"
                out.append(
                    Finding(
                        "enum_values",
                        Level.ERROR,
                        f"{e.table}.{f.column} holds values {key} does not list: "
                        + ", ".join(repr(v) for v in unlisted[:MAX_EXAMPLES])
                        + (" …" if len(unlisted) > MAX_EXAMPLES else ""),
                        fix=f"add them to {key} (or as aliases of a listed value), or "
                        "correct the rows: a filter on this field never matches them",
                        entity=name,
                        table=e.table,
                        column=f.column,
                        details={"unlisted": unlisted[:MAX_DISTINCT]},
                    )
                )
    return out


def unique_ids(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    with ctx.engine.connect() as conn:
        for name, e in ctx.catalog.entities.items():
            columns = ctx.columns(e.table) or {}
            if e.id not in columns or e.tenant not in columns:
                continue  # columns_exist reports it
            tenant: sa.ColumnClause[Any] = sa.column(e.tenant)
            ident: sa.ColumnClause[Any] = sa.column(e.id)
            query = (
                sa.select(tenant, ident, sa.func.count().label("n"))
                .select_from(sa.table(e.table))
                .group_by(tenant, ident)
                .having(sa.func.count() > 1)
                .limit(MAX_EXAMPLES)
            )
            repeated = [(str(r[0]), str(r[1]), int(r[2])) for r in conn.execute(query)]
            if repeated:
                shown = ", ".join(f"{i!r} ×{n} in tenant {t!r}" for t, i, n in repeated)
                out.append(
                    Finding(
                        "unique_ids",
                        Level.ERROR,
                        f"ids of {e.table}.{e.id} repeat within a tenant: {shown}",
                        fix=f"make ({e.tenant}, {e.id}) unique (a primary key or unique "
                        "index) after removing the duplicates; answers name objects by id",
                        entity=name,
                        table=e.table,
                        column=e.id,
                        details={"examples": [list(r) for r in repeated]},
                    )
                )
    return out
