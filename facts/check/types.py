"""Each column the catalog names, its field type against the column's real type.

`SERVED` is what the executor serves (`qdsl.executor.column_types`): a field
type on a stored class of each dialect. A pair outside it is refused, naming
the entity, the field, the column, both types and what to do. Where the type
alone cannot tell (SQLite keeps dates as text and booleans as integers, and
lets any column hold any value; a PostgreSQL integer used as a yes/no field),
the column's values are sampled: every sampled value must read as the field
type, as the executor will read it. So a check that passes means every
catalog question can run on these columns (values written later are not seen).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine.interfaces import ReflectedColumn

from qdsl.dsl.catalog import FieldType
from qdsl.facts.check.columns import roles
from qdsl.facts.check.findings import CheckContext, Finding, Level
from qdsl.facts.storage import Stored, classify, to_datetime

S = Stored
_TIMES = frozenset({S.DATE, S.TIMESTAMP, S.TIMESTAMPTZ})
_TEXT = frozenset({S.STRING, S.LABEL})
_NUMBERS = frozenset({S.INTEGER, S.NUMERIC, S.FLOAT4, S.FLOAT})

# field type -> dialect -> the stored classes the executor serves it on
SERVED: dict[FieldType, dict[str, frozenset[Stored]]] = {
    FieldType.TEXT: {"postgresql": _TEXT, "sqlite": frozenset({S.STRING})},
    FieldType.ENUM: {"postgresql": _TEXT, "sqlite": frozenset({S.STRING})},
    FieldType.ID: {
        "postgresql": frozenset({S.STRING, S.INTEGER, S.UUID}),
        "sqlite": frozenset({S.STRING, S.INTEGER}),
    },
    FieldType.NUMBER: {"postgresql": _NUMBERS, "sqlite": _NUMBERS},
    # SQLite has no time type: dates are ISO text in any of these declared columns
    FieldType.DATE: {"postgresql": _TIMES, "sqlite": _TIMES | {S.STRING}},
    FieldType.DATETIME: {"postgresql": _TIMES, "sqlite": _TIMES | {S.STRING}},
    FieldType.BOOL: {
        "postgresql": frozenset({S.BOOLEAN, S.INTEGER}),
        "sqlite": frozenset({S.BOOLEAN, S.INTEGER}),
    },
}

_ADVICE: dict[FieldType, str] = {
    FieldType.TEXT: "a text column (TEXT, VARCHAR)",
    FieldType.ENUM: "a text column (TEXT, VARCHAR) or, on PostgreSQL, an enum type",
    FieldType.ID: "a TEXT, VARCHAR or INTEGER column (or UUID on PostgreSQL)",
    FieldType.NUMBER: "an INTEGER, NUMERIC, REAL or DOUBLE column",
    FieldType.DATE: "a DATE or TIMESTAMP column (on SQLite: ISO text such as 2025-03-01)",
    FieldType.DATETIME: "a TIMESTAMP or DATE column (on SQLite: ISO text such as "
    "2025-03-01T09:30:00Z)",
    FieldType.BOOL: "a BOOLEAN column, or an INTEGER holding only 0 and 1",
}

# Distinct values sampled per column: enough to find a stray spelling, bounded.
SAMPLE = 200


def _reads_as_time(v: Any) -> bool:
    if isinstance(v, date):  # datetimes too
        return True
    if not isinstance(v, str):
        return False  # an epoch number, bytes: not a time the executor reads
    try:
        to_datetime(v)
    except ValueError:
        return False
    return True


def _reads_as_number(v: Any) -> bool:
    return isinstance(v, int | float | Decimal) and not isinstance(v, bool)


def _reads_as_bool(v: Any) -> bool:
    return isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))


def _reads_as_text(v: Any) -> bool:
    return isinstance(v, str)


def _reads_as_id(v: Any) -> bool:
    return isinstance(v, str | int) and not isinstance(v, bool)


# What each stored value must be for the field type (sampled where it matters).
_READS: dict[FieldType, Callable[[Any], bool]] = {
    FieldType.DATE: _reads_as_time,
    FieldType.DATETIME: _reads_as_time,
    FieldType.NUMBER: _reads_as_number,
    FieldType.BOOL: _reads_as_bool,
    FieldType.TEXT: _reads_as_text,
    FieldType.ENUM: _reads_as_text,
    FieldType.ID: _reads_as_id,
}


def needs_sample(kind: FieldType, stored: Stored, dialect: str) -> bool:
    """Whether the column's type alone cannot tell that its values read as `kind`."""
    if dialect == "sqlite":
        return True  # any SQLite column can hold any value
    return kind is FieldType.BOOL and stored is S.INTEGER


def served(kind: FieldType, stored: Stored, dialect: str) -> bool:
    return stored in SERVED[kind].get(dialect, frozenset())


def _sample(ctx: CheckContext, table: str, column: str) -> list[Any]:
    col: sa.ColumnClause[Any] = sa.column(column)
    query = (
        sa.select(col).select_from(sa.table(table)).where(col.is_not(None)).distinct().limit(SAMPLE)
    )
    with ctx.engine.connect() as conn:
        # an untyped column: the values as the driver returns them, unprocessed
        return list(conn.execute(query).scalars())


def _finding(
    where: str,
    entity: str,
    table: str,
    column: str,
    *,
    kind: FieldType,
    found: ReflectedColumn,
    why: str,
    extra: dict[str, Any] | None = None,
) -> Finding:
    real = str(found["type"])
    return Finding(
        "field_types",
        Level.ERROR,
        f"{where} is a `{kind.value}` field on column {table}.{column} ({real}): {why}",
        fix=f"store it in {_ADVICE[kind]}, or declare {where} with the type its values have",
        entity=entity,
        table=table,
        column=column,
        details={"field_type": kind.value, "column_type": real, **(extra or {})},
    )


def field_types(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    for name, e in ctx.catalog.entities.items():
        columns = ctx.columns(e.table)
        if columns is None:
            continue  # columns_exist names the missing table
        for key, column, kind in roles(e):
            found = columns.get(column)
            if found is None or kind is None:
                continue  # columns_exist names a missing column
            where = f"entities.{name}.{key}"
            stored = classify(found["type"], ctx.dialect)
            if stored is S.LABEL and key == "tenant":
                # the tenant is bound as plain text
                out.append(
                    _finding(
                        where,
                        name,
                        e.table,
                        column,
                        kind=kind,
                        found=found,
                        why="an enum type serves a field or the label, not the tenant",
                    )
                )
                continue
            if not served(kind, stored, ctx.dialect):
                out.append(
                    _finding(
                        where,
                        name,
                        e.table,
                        column,
                        kind=kind,
                        found=found,
                        why="qdsl cannot compare or read that column as this type",
                    )
                )
                continue
            if not needs_sample(kind, stored, ctx.dialect):
                continue
            bad = [v for v in _sample(ctx, e.table, column) if not _READS[kind](v)]
            if bad:
                shown = ", ".join(repr(v) for v in bad[:5])
                out.append(
                    _finding(
                        where,
                        name,
                        e.table,
                        column,
                        kind=kind,
                        found=found,
                        why=f"values that do not read as `{kind.value}`: {shown}",
                        extra={"examples": [str(v) for v in bad[:5]]},
                    )
                )
        # a text_search column that is a field's was checked as that field's type
        fields = {f.column for f in e.fields.values() if f.column is not None}
        searched = tuple(c for c in e.text_search if c in fields)
        out.extend(_text_search(name, e.table, searched, columns, ctx.dialect))
    return out


def _text_search(
    entity: str,
    table: str,
    names: tuple[str, ...],
    columns: dict[str, ReflectedColumn],
    dialect: str,
) -> list[Finding]:
    """text_search columns are indexed and matched as text: text columns only (here
    the fields' own columns, which their field type alone would pass)."""
    out = []
    for column in names:
        found = columns.get(column)
        if found is None or classify(found["type"], dialect) is S.STRING:
            continue
        out.append(
            _finding(
                f"entities.{entity}.text_search",
                entity,
                table,
                column,
                kind=FieldType.TEXT,
                found=found,
                why="text search reads a text column",
            )
        )
    return out
