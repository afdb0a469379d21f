"""Each catalog field type on each stored column type: how it binds, compares and reads.

The one place where a field's meaning (`FieldType`) meets its column's storage
(`qdsl.facts.storage.Stored`, reflected; None where no database was asked, as
for `qdsl compile`). Every statement's values are read through the column
types made here (SQLAlchemy's result processing runs the type's own), so a
value reads the same on every engine:

* `date` values read as `datetime.date`, whether the column is a DATE, a
  TIMESTAMP (its UTC day) or SQLite text; they compare as days: the column's
  UTC day against the bound date.
* `datetime` values read as aware UTC datetimes from DATE, TIMESTAMP (naive =
  UTC), TIMESTAMPTZ or SQLite text (any ISO form); they compare as instants.
* ids read as text (an INTEGER or UUID id is cast in SQL, so joins with the
  facts' and grams' text ids compare text with text); an id filter binds a
  value of the column's own type, and a value that cannot be one (``"E-4"``
  for an INTEGER id) binds NULL: it matches no row, where the database would
  refuse the whole statement.
* numbers bind as NUMERIC for a NUMERIC column (exact), as text the server
  reads as REAL for a PostgreSQL REAL column (equality on a single-precision
  value), else as DOUBLE.
* booleans bind as BOOLEAN, or 0/1 for an integer column.
* text compares through lower() on a text column, or on the column cast to
  text (a PostgreSQL enum); only text columns sort with the "C" collation,
  everything else in its own order.

What `qdsl catalog check` refuses is exactly what this cannot serve
(`qdsl.facts.check.types`).
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator, TypeEngine

from qdsl.dsl.catalog import FieldType
from qdsl.facts.storage import Stored, to_date, to_datetime

TEXT_TYPES = frozenset({FieldType.TEXT, FieldType.ENUM, FieldType.ID})
# Stored classes whose values are text in SQL (no cast needed to compare or join as text).
_TEXTUAL = frozenset({None, Stored.STRING})
_SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"  # SQLAlchemy's storage format for times on SQLite


class FieldDate(TypeDecorator[date]):
    """A `date` field: binds a date (ISO text on SQLite), reads a date from any storage."""

    impl = sa.Date
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        # SQLite: the raw text, parsed here (SQLAlchemy's own parser ignores offsets)
        return dialect.type_descriptor(sa.Text() if dialect.name == "sqlite" else sa.Date())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        day = to_date(value)
        return day.isoformat() if dialect.name == "sqlite" else day

    def process_result_value(self, value: Any, dialect: Dialect) -> date | None:
        return None if value is None else to_date(value)


class FieldDateTime(TypeDecorator[datetime]):
    """A `datetime` field: binds an aware UTC instant (SQLAlchemy's UTC text on SQLite),
    reads an aware UTC datetime from any storage."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.Text())
        return dialect.type_descriptor(sa.DateTime(timezone=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        moment = to_datetime(value)
        return moment.strftime(_SQLITE_TIME) if dialect.name == "sqlite" else moment

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else to_datetime(value)


_JD_UNIX_EPOCH_MS = 210_866_760_000_000  # the Julian day of 1970-01-01, in milliseconds
_UNIX = datetime(1970, 1, 1, tzinfo=UTC)


class JulianDay(TypeDecorator[float]):
    """An instant bound as SQLite's julianday() of it (for `julianday(col) IN (...)`,
    whose list elements a SQL function cannot wrap): the same millisecond count
    SQLite works from, divided as it divides."""

    impl = sa.Float
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> float | None:
        if value is None:
            return None
        delta = to_datetime(value) - _UNIX
        ms = (delta.days * 86_400 + delta.seconds) * 1000 + round(delta.microseconds / 1000)
        return (ms + _JD_UNIX_EPOCH_MS) / 86_400_000.0


class IntegerId(TypeDecorator[str]):
    """An id kept in an integer column: binds the int its text names (NULL, matching
    nothing, when it names none in BIGINT's range), reads its text."""

    impl = sa.BigInteger
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> int | None:
        if value is None:
            return None
        text = str(value).strip()
        try:
            number = int(text)
        except ValueError:
            return None
        return number if -(2**63) <= number < 2**63 else None

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else str(value)


class UuidId(TypeDecorator[str]):
    """An id kept in a UUID column: binds the UUID its text names (NULL when none),
    reads its canonical text."""

    impl = sa.Uuid(as_uuid=False)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        try:
            return str(uuid.UUID(str(value).strip()))
        except ValueError:
            return None

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else str(value)


class ExactNumber(TypeDecorator[float]):
    """A number compared with a NUMERIC column: bound as the decimal it is written as
    (psycopg sends a float as DOUBLE, and NUMERIC = DOUBLE compares in binary)."""

    impl = sa.Numeric(asdecimal=False)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Decimal | None:
        return None if value is None else Decimal(repr(float(value)))


class SingleNumber(TypeDecorator[float]):
    """A number compared with a PostgreSQL REAL column: bound as text of unknown type,
    which the server reads as REAL (a DOUBLE 0.1 is not the REAL 0.1 the row holds)."""

    impl = sa.REAL
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else repr(float(value))


class IntegerBool(TypeDecorator[bool]):
    """A yes/no field kept as 0/1 in an integer column (PostgreSQL has no int = bool)."""

    impl = sa.Integer
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> int | None:
        return None if value is None else int(bool(value))

    def process_result_value(self, value: Any, dialect: Dialect) -> bool | None:
        return None if value is None else bool(value)


class IdText(TypeDecorator[str]):
    """An id compared as text with an INTEGER or UUID id cast to text: bound as the
    column's own spelling of the value (``"007"`` as ``"7"``, a UUID in its
    canonical form), any other value as written, which no stored id spells."""

    impl = sa.Text
    cache_ok = True

    def __init__(self, stored: Stored | None = None) -> None:
        super().__init__()
        self.stored = stored

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        text = str(value).strip()
        if self.stored is Stored.INTEGER:
            number = IntegerId().process_bind_param(text, dialect)
            return text if number is None else str(number)
        if self.stored is Stored.UUID:
            found = UuidId().process_bind_param(text, dialect)
            return text if found is None else found
        return text


def excludes_as_text(kind: FieldType, stored: Stored | None) -> bool:
    """Whether `!=` / `not in` on the column compare its text: an id kept in an
    INTEGER or UUID column, where a value it cannot hold would bind NULL and so
    exclude every row, when it excludes none."""
    return kind is FieldType.ID and stored in (Stored.INTEGER, Stored.UUID)


def column_type(kind: FieldType | None, stored: Stored | None) -> TypeEngine[Any] | None:
    """The bind and result type of a column holding `kind`, stored as `stored`."""
    if kind is None:
        return None
    if kind is FieldType.ID:
        if stored is Stored.INTEGER:
            return IntegerId()
        if stored is Stored.UUID:
            return UuidId()
        return sa.Text()
    if kind is FieldType.NUMBER:
        if stored is Stored.NUMERIC:
            return ExactNumber()
        if stored is Stored.FLOAT4:
            return SingleNumber()
        return sa.Float()
    if kind is FieldType.BOOL:
        return IntegerBool() if stored is Stored.INTEGER else sa.Boolean()
    if kind is FieldType.DATE:
        return FieldDate()
    if kind is FieldType.DATETIME:
        return FieldDateTime()
    return sa.Text()


def as_text(col: ColumnElement[Any], stored: Stored | None) -> ColumnElement[Any]:
    """The column as SQL text: itself when it is text, else cast (ids joined with the
    facts' text ids, a PostgreSQL enum compared with text)."""
    return col if stored in _TEXTUAL else sa.cast(col, sa.Text())


def product_factor(
    col: ColumnElement[Any], stored: Stored | None, dialect: str
) -> ColumnElement[Any]:
    """A number column as a factor of a declared product (`times`): on PostgreSQL an
    integer column is widened to BIGINT, since SMALLINT × SMALLINT and INTEGER ×
    INTEGER are computed in their own type and overflow (300 × 300, 60000 × 60000)
    long before a sum of them would; SQLite's integers are 64-bit already. The
    value is read as the column's field type reads it."""
    if dialect == "postgresql" and stored is Stored.INTEGER:
        return sa.type_coerce(sa.cast(col, sa.BigInteger()), col.type)
    return col


def compared(
    col: ColumnElement[Any], kind: FieldType, stored: Stored | None, dialect: str
) -> ColumnElement[Any]:
    """The column side of every comparison of a `kind` filter."""
    if kind is FieldType.TEXT:
        # filter values arrive casefolded; the column is compared the same way
        return sa.func.lower(as_text(col, stored))
    if kind is FieldType.ENUM:
        return as_text(col, stored)
    if kind is FieldType.DATE:
        if dialect == "sqlite":
            return sa.func.date(col)
        # the session's time zone is UTC (executor.run): a timestamp's UTC day
        return col if stored is Stored.DATE else sa.cast(col, sa.Date())
    if kind is FieldType.DATETIME and dialect == "sqlite":
        # rows written by different tools spell one instant differently
        # ('... 11:00:00.000000' / '...T11:00:00+00:00'): julianday() compares instants
        return sa.func.julianday(col)
    return col


def value_side(param: ColumnElement[Any], kind: FieldType, dialect: str) -> ColumnElement[Any]:
    """The bound side of a scalar comparison (`compared` on the column side)."""
    if kind is FieldType.DATETIME and dialect == "sqlite":
        return sa.func.julianday(param)
    return param


def list_type(kind: FieldType, stored: Stored | None, dialect: str) -> TypeEngine[Any] | None:
    """The element type of an IN list compared with `compared(col, ...)`."""
    if kind is FieldType.DATETIME and dialect == "sqlite":
        return JulianDay()
    if kind in (FieldType.TEXT, FieldType.ENUM):
        return sa.Text()
    return column_type(kind, stored)


def collatable(kind: FieldType | None, stored: Stored | None) -> bool:
    """Whether a sort on the column takes the "C" collation: text kept as text."""
    return kind in TEXT_TYPES and stored in _TEXTUAL
