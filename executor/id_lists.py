"""A list of ids bound as one parameter, whatever its length.

The ids of the rows a call read (up to an entity's `max_limit`, 10,000 or
more) select their facts in a later statement. An expanding IN sends one
parameter per id: the SQL text changes with the count, SQLAlchemy renders
every placeholder, and once psycopg prepares the statement PostgreSQL's
generic plan tests each fact against the whole list one by one (3.5 s for a
10,000-row list where the custom plan took 10 ms). One array parameter keeps
one text per shape and a plan that does not depend on the count: `= ANY` on
PostgreSQL, `json_each` over the list as JSON on SQLite (no limit on the
number of bound variables).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import ColumnElement


class JsonList(sa.types.TypeDecorator[Sequence[Any]]):
    """A list bound as its JSON text (SQLite's `json_each` reads it)."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Sequence[Any] | None, dialect: Dialect) -> str | None:
        return None if value is None else json.dumps(list(value), ensure_ascii=False)

    def process_literal_param(self, value: Sequence[Any] | None, dialect: Dialect) -> str:
        return json.dumps(list(value or ()), ensure_ascii=False)


def ids_type(dialect: str) -> sa.types.TypeEngine[Any]:
    """The type of a parameter holding a list of text ids (the generic ARRAY:
    `sqlalchemy.dialects.postgresql` would cost every SQLite process its import)."""
    return sa.ARRAY(sa.Text()) if dialect == "postgresql" else JsonList()


def in_ids(
    column: ColumnElement[Any], ids: sa.BindParameter[Any], dialect: str
) -> ColumnElement[bool]:
    """`column` (text) is one of `ids` (a parameter of `ids_type(dialect)`)."""
    if dialect == "postgresql":
        # cast: `qdsl compile --literal` shows run-time ids empty, and an empty
        # ARRAY[] pasted into psql has no type
        return column == sa.any_(sa.cast(ids, ids.type))
    each = sa.func.json_each(ids).table_valued("value")
    return column.in_(sa.select(each.c.value))
