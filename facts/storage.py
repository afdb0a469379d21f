"""How a deployer's columns are stored: the SQL type classes qdsl tells apart.

A catalog says what a field means (`date`, `id`, `bool` ...); the table says how
it is kept (DATE or TIMESTAMP, INTEGER or TEXT ids, BOOLEAN or 0/1). The
executor chooses the SQL of a comparison, a sort and a bound value by both
(`qdsl.executor.column_types`), and `qdsl catalog check` refuses the pairs it
cannot serve (`qdsl.facts.check.types`); both read the storage from here, so
they cannot disagree about a column.

Reflected with SQLAlchemy's inspector, tables and views alike, once per engine
and catalog content (`storage_for`): a process that answers many questions
reflects once. SQLite keeps a declared type as text; `reflected_columns` reads
the declaration where SQLAlchemy's affinity mapping loses it.
"""

from __future__ import annotations

import threading
import weakref
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Engine, inspect
from sqlalchemy import types as sqltypes
from sqlalchemy.engine.interfaces import ReflectedColumn
from sqlalchemy.engine.reflection import ObjectKind
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog

# -- reading stored times, as the executor and the check both must -------------------


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime (a naive one is taken as UTC: the whole schema is UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_time(text: str) -> datetime:
    """Any ISO date or datetime text (`T` or space, `Z`, an offset, any fraction) as UTC."""
    return as_utc(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))


def to_date(value: Any) -> date:
    """A `date` field's value as a date: a datetime's UTC day, text parsed."""
    if isinstance(value, datetime):
        return as_utc(value).date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    if len(text) == 10:
        return date.fromisoformat(text)
    return parse_time(text).date()


def to_datetime(value: Any) -> datetime:
    """A `datetime` field's value as an aware UTC datetime (a date is its UTC midnight)."""
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return parse_time(str(value))


class Stored(StrEnum):
    """A column's type class, as far as reading and comparing it differ."""

    STRING = "string"  # TEXT, VARCHAR(n), CHAR(n), CLOB
    LABEL = "label"  # a PostgreSQL enum type: text-like values, its own order
    INTEGER = "integer"  # SMALLINT, INTEGER, BIGINT
    NUMERIC = "numeric"  # NUMERIC / DECIMAL
    FLOAT4 = "float4"  # PostgreSQL REAL (single precision)
    FLOAT = "float"  # DOUBLE PRECISION, FLOAT; SQLite REAL (always 8 bytes)
    BOOLEAN = "boolean"
    DATE = "date"
    TIMESTAMP = "timestamp"  # without time zone
    TIMESTAMPTZ = "timestamptz"
    UUID = "uuid"
    OTHER = "other"  # anything else (JSON, arrays, bytes, an undeclared SQLite column)


def classify(type_: sqltypes.TypeEngine[Any], dialect: str) -> Stored:
    """The class of a reflected column type (most specific SQLAlchemy class first)."""
    if isinstance(type_, sqltypes.Enum):  # a String subclass: test it first
        return Stored.LABEL if dialect == "postgresql" else Stored.STRING
    if isinstance(type_, sqltypes.String):
        return Stored.STRING
    if isinstance(type_, sqltypes.Uuid):
        return Stored.UUID
    if isinstance(type_, sqltypes.Boolean):
        return Stored.BOOLEAN
    if isinstance(type_, sqltypes.Integer):
        return Stored.INTEGER
    if isinstance(type_, sqltypes.Float):
        if dialect == "postgresql" and isinstance(type_, sqltypes.REAL):
            return Stored.FLOAT4
        return Stored.FLOAT
    if isinstance(type_, sqltypes.Numeric):
        return Stored.NUMERIC
    if isinstance(type_, sqltypes.DateTime):
        return Stored.TIMESTAMPTZ if type_.timezone else Stored.TIMESTAMP
    if isinstance(type_, sqltypes.Date):
        return Stored.DATE
    return Stored.OTHER


def _declared(conn: Connection, table: str) -> dict[str, str]:
    from sqlalchemy import text

    query = text("SELECT name, type FROM pragma_table_info(:table)")
    return {str(n): str(t).upper() for n, t in conn.execute(query, {"table": table})}


# Declared-type words, most specific first, and the type they mean (SQLite maps
# an unknown declaration by affinity: `TIMESTAMP WITH TIME ZONE` reflects as NUMERIC).
_WORDS: tuple[tuple[str, sqltypes.TypeEngine[Any]], ...] = (
    ("TIMESTAMP WITH TIME ZONE", sqltypes.DateTime(timezone=True)),
    ("TIMESTAMPTZ", sqltypes.DateTime(timezone=True)),
    ("TIMESTAMP", sqltypes.DateTime()),
    ("DATETIME", sqltypes.DateTime()),
    ("DATE", sqltypes.Date()),
    ("BOOL", sqltypes.Boolean()),
    ("UUID", sqltypes.Uuid()),
)


def reflected_columns(conn: Connection | Engine, table: str) -> list[ReflectedColumn]:
    """The inspector's columns of a table or view, SQLite types from their declarations."""
    if isinstance(conn, Engine):
        with conn.connect() as c:
            return reflected_columns(c, table)
    columns = inspect(conn).get_columns(table)
    if conn.dialect.name != "sqlite":
        return columns
    declared = _declared(conn, table)
    for column in columns:
        if isinstance(column["type"], sqltypes.String | sqltypes.DateTime | sqltypes.Date):
            continue
        text = declared.get(column["name"], "")
        for word, meant in _WORDS:
            if word in text:
                column["type"] = meant
                break
    return columns


class Storage:
    """The stored class of every column of the catalog's entity tables that has one.

    Compared and hashed by its content (`key`), the hash worked out once: it
    stands in cache keys on every call. One object per content (`_interned`)."""

    __slots__ = ("__weakref__", "_by_column", "_hash", "key")

    def __init__(self, key: tuple[tuple[str, str, Stored], ...]) -> None:
        self.key = key
        self._hash = hash(key)
        self._by_column = {(t, c): s for t, c, s in key}

    def of(self, table: str, column: str) -> Stored | None:
        return self._by_column.get((table, column))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Storage) and self.key == other.key)

    def __repr__(self) -> str:
        return f"Storage({len(self.key)} columns)"


_INTERNED: weakref.WeakValueDictionary[tuple[Any, ...], Storage] = weakref.WeakValueDictionary()
_LOCK = threading.Lock()


def _interned(key: tuple[tuple[str, str, Stored], ...]) -> Storage:
    with _LOCK:
        found = _INTERNED.get(key)
        if found is None:
            found = _INTERNED[key] = Storage(key)
        return found


def reflect_storage(conn: Connection, catalog: Catalog) -> Storage:
    """The storage of the catalog's entity tables (a table that cannot be read is left out:
    its columns are then compiled by their catalog types alone, as without a database)."""
    dialect = conn.dialect.name
    tables = sorted({e.table for e in catalog.entities.values()})
    out: list[tuple[str, str, Stored]] = []
    if dialect == "postgresql":
        # every table and view in one reflection (a round trip per table costs more
        # than the rest of a question)
        try:
            found = inspect(conn).get_multi_columns(filter_names=tables, kind=ObjectKind.ANY)
        except SQLAlchemyError:
            found = {}
            if conn.in_transaction():
                conn.rollback()
        for (_schema, table), columns in sorted(found.items(), key=lambda kv: kv[0][1]):
            out.extend((table, str(c["name"]), classify(c["type"], dialect)) for c in columns)
        return _interned(tuple(out))
    for table in tables:
        try:
            columns = reflected_columns(conn, table)
        except SQLAlchemyError:
            if conn.in_transaction():
                conn.rollback()
            continue
        out.extend((table, str(c["name"]), classify(c["type"], dialect)) for c in columns)
    return _interned(tuple(out))


# engine -> catalog content key -> its storage (reflected once per process)
_BY_ENGINE: weakref.WeakKeyDictionary[Engine, dict[str, Storage]] = weakref.WeakKeyDictionary()


def storage_for(engine: Engine, catalog: Catalog, content_key: str) -> Storage | None:
    """The storage of `catalog`'s tables on `engine`, reflected on first use (None when
    the database cannot be reached: the statement that follows reports why)."""
    known = _BY_ENGINE.get(engine)
    if known is not None:
        found = known.get(content_key)
        if found is not None:
            return found
    try:
        with engine.connect() as conn:
            found = reflect_storage(conn, catalog)
    except SQLAlchemyError:
        return None
    remember(engine, content_key, found)
    return found


def remember(engine: Engine, content_key: str, storage: Storage) -> None:
    with _LOCK:
        known = _BY_ENGINE.setdefault(engine, {})
        if len(known) >= _PER_ENGINE_MAX:
            known.clear()
        known[content_key] = storage


def known_storage(engine: Engine, content_key: str) -> Storage | None:
    known = _BY_ENGINE.get(engine)
    return known.get(content_key) if known is not None else None


def forget(engine: Engine) -> None:
    """Reflect again on next use (after the deployer changed a column's type)."""
    with _LOCK:
        _BY_ENGINE.pop(engine, None)


_PER_ENGINE_MAX = 16
