"""Column types as declared, where SQLite's reflection loses them.

SQLite keeps a column's declared type as text and SQLAlchemy maps an unknown
declaration by affinity: `TIMESTAMP WITH TIME ZONE` (portable DDL) reflects as
NUMERIC. The declaration, read back with `pragma_table_info`, says what the
column holds; the checks and the catalog draft read types through here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine, inspect
from sqlalchemy import types as sqltypes
from sqlalchemy.engine.interfaces import ReflectedColumn

# Declared-type words, most specific first, and the type they mean.
_WORDS: tuple[tuple[str, sqltypes.TypeEngine[Any]], ...] = (
    ("TIMESTAMP", sqltypes.DateTime(timezone=True)),
    ("DATETIME", sqltypes.DateTime()),
    ("DATE", sqltypes.Date()),
    ("BOOL", sqltypes.Boolean()),
)


def _declared(engine: Engine, table: str) -> dict[str, str]:
    query = sa.text("SELECT name, type FROM pragma_table_info(:table)")
    with engine.connect() as conn:
        return {str(n): str(t).upper() for n, t in conn.execute(query, {"table": table})}


def reflected_columns(engine: Engine, table: str) -> list[ReflectedColumn]:
    """The inspector's columns, with SQLite types taken from their declarations."""
    columns = inspect(engine).get_columns(table)
    if engine.dialect.name != "sqlite":
        return columns
    declared = _declared(engine, table)
    for column in columns:
        if isinstance(column["type"], sqltypes.String | sqltypes.DateTime | sqltypes.Date):
            continue
        text = declared.get(column["name"], "")
        for word, meant in _WORDS:
            if word in text:
                column["type"] = meant
                break
    return columns
