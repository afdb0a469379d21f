"""Every entity's table (or view) and the columns the catalog names exist (their
types: `facts.check.types`)."""

from __future__ import annotations

from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.facts.check.findings import CheckContext, Finding, Level


def roles(e: EntitySpec) -> list[tuple[str, str, FieldType | None]]:
    """(catalog key, column, wanted type) for every column the entity names."""
    wanted: list[tuple[str, str, FieldType | None]] = [
        ("id", e.id, FieldType.ID),
        ("tenant", e.tenant, FieldType.TEXT),
        ("label", e.label, FieldType.TEXT),
    ]
    for name, f in e.fields.items():
        if f.column is not None:
            wanted.append((f"fields.{name}", f.column, f.type))
    declared = {c for _, c, _ in wanted}
    for key, names in (
        ("text_search", e.text_search),
        ("sorts", e.sorts),
        ("default_projection", e.default_projection),
    ):
        for n in names:
            # a field's name stands for its column, named above (a fact has none)
            if n not in declared and n not in e.fields:
                wanted.append((key, n, FieldType.TEXT if key == "text_search" else None))
                declared.add(n)
    if e.updated_at is not None and e.updated_at not in declared:
        # a date or a timestamp: `qdsl index refresh --since` compares it with a time
        wanted.append(("updated_at", e.updated_at, FieldType.DATE))
    return wanted


def columns_exist(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    for name, e in ctx.catalog.entities.items():
        columns = ctx.columns(e.table)
        if columns is None:
            out.append(
                Finding(
                    "columns_exist",
                    Level.ERROR,
                    f"entity {name!r} maps to table {e.table!r}, "
                    "which does not exist as a table or a view",
                    fix=f"create the table (or view), or set entities.{name}.table to an "
                    "existing table or view",
                    entity=name,
                    table=e.table,
                )
            )
            continue
        for key, column, _wanted in roles(e):
            where = f"entities.{name}.{key}"
            if column not in columns:
                out.append(
                    Finding(
                        "columns_exist",
                        Level.ERROR,
                        f"{where} names column {column!r}, which {e.table!r} does not have",
                        fix=f"add the column to {e.table!r} or correct {where}",
                        entity=name,
                        table=e.table,
                        column=column,
                    )
                )
    return out
