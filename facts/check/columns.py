"""Every entity's table and the columns the catalog names exist, with a usable type."""

from __future__ import annotations

from typing import Any

from sqlalchemy import types as sqltypes

from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.facts.check.findings import CheckContext, Finding, Level

_TEXT = (sqltypes.String,)
_NUMBER = (sqltypes.Integer, sqltypes.Numeric, sqltypes.Float)
# What a column of each field type may be stored as (reflected type classes).
COMPATIBLE: dict[FieldType, tuple[type[sqltypes.TypeEngine[Any]], ...]] = {
    FieldType.TEXT: _TEXT,
    FieldType.ENUM: _TEXT,
    FieldType.NUMBER: _NUMBER,
    FieldType.DATE: (sqltypes.Date, sqltypes.DateTime),
    FieldType.DATETIME: (sqltypes.DateTime,),
    FieldType.BOOL: (sqltypes.Boolean, sqltypes.Integer),
    FieldType.ID: (sqltypes.String, sqltypes.Integer, sqltypes.Uuid),
}


def _roles(e: EntitySpec) -> list[tuple[str, str, FieldType | None]]:
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
        fact_fields = {n for n, f in e.fields.items() if f.is_fact}
        for n in names:
            if n not in declared and n not in fact_fields:
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
                    f"entity {name!r} maps to table {e.table!r}, which does not exist",
                    fix=f"create the table, or set entities.{name}.table to an existing table",
                    entity=name,
                    table=e.table,
                )
            )
            continue
        for key, column, wanted in _roles(e):
            found = columns.get(column)
            where = f"entities.{name}.{key}"
            if found is None:
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
                continue
            allowed = COMPATIBLE[wanted] if wanted is not None else None
            if allowed is not None and not isinstance(found["type"], allowed):
                out.append(
                    Finding(
                        "columns_exist",
                        Level.ERROR,
                        f"{where}: column {e.table}.{column} is {found['type']!s}, "
                        f"not usable as a {wanted.value if wanted else ''} value",
                        fix=f"change {where}'s type to match the column, or the column's "
                        f"type to a {', '.join(t.__name__ for t in allowed)} type",
                        entity=name,
                        table=e.table,
                        column=column,
                        details={"column_type": str(found["type"])},
                    )
                )
    return out
