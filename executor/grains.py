"""A breakdown's key of a time field: the calendar period a value falls in, per dialect.

The period is named by its first day (a date; a week starts on Monday, ISO) and
read in the catalog's time zone for a `datetime` field, whatever the column's
storage: an instant stored as TIMESTAMPTZ, as TIMESTAMP (naive = UTC, as
`executor.column_types` reads it), as DATE (its UTC midnight) or as text. A
`date` field is a calendar day (a timestamp's UTC day) and has no zone.

PostgreSQL computes it with `date_trunc` over the value `AT TIME ZONE` the
catalog's zone; SQLite, which has no time type, with `qdsl_period`, a function
the executor registers on its connections (`executor.sqlite_functions`) that
reads any ISO spelling the way the column types do. The grain and the zone are
bound parameters.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement

from qdsl.dsl.catalog import FieldType, Grain
from qdsl.facts.storage import Stored, to_date, to_datetime

SQLITE_FUNCTION = "qdsl_period"


def period_start(value: Any, kind: str, grain: str | None, zone: str) -> date | None:
    """The first day of the period `value` falls in (a date field: the day itself)."""
    if value is None:
        return None
    if kind == FieldType.DATETIME.value:
        day = to_datetime(value).astimezone(ZoneInfo(zone)).date()
    else:
        day = to_date(value)
    return truncate(day, None if grain is None else Grain(grain))


def truncate(day: date, grain: Grain | None) -> date:
    if grain is None or grain is Grain.DAY:
        return day
    if grain is Grain.WEEK:
        return day - timedelta(days=day.weekday())
    if grain is Grain.MONTH:
        return day.replace(day=1)
    if grain is Grain.QUARTER:
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    return day.replace(month=1, day=1)


def sqlite_period(value: Any, kind: str, grain: str | None, zone: str) -> str | None:
    """`period_start` as SQLite's function: ISO text, NULL for NULL or an unreadable value."""
    try:
        start = period_start(value, kind, grain, zone)
    except (TypeError, ValueError):
        return None
    return None if start is None else start.isoformat()


def _instant_pg(col: ColumnElement[Any], stored: Stored | None) -> ColumnElement[Any]:
    """The column as a timestamptz (an instant)."""
    if stored is Stored.TIMESTAMPTZ:
        return col
    if stored in (Stored.TIMESTAMP, Stored.DATE):
        # naive values are UTC, a date its UTC midnight
        naive = sa.cast(col, sa.DateTime()) if stored is Stored.DATE else col
        return sa.func.timezone(sa.literal("UTC"), naive)
    return sa.cast(col, sa.DateTime(timezone=True))


def _day_pg(col: ColumnElement[Any], stored: Stored | None) -> ColumnElement[Any]:
    """The column as a calendar day (a timestamp's UTC day)."""
    if stored is Stored.TIMESTAMPTZ:
        return sa.cast(sa.func.timezone(sa.literal("UTC"), col), sa.Date())
    return sa.cast(col, sa.Date())


def period_of(
    col: ColumnElement[Any],
    kind: FieldType,
    *,
    stored: Stored | None,
    grain: Grain | None,
    zone: str,
    dialect: str,
) -> ColumnElement[Any]:
    """The key expression of a time field's column."""
    if dialect == "sqlite":
        return sa.func.qdsl_period(
            col,
            sa.literal(kind.value),
            sa.literal(None if grain is None else grain.value, sa.Text()),
            sa.literal(zone),
            type_=sa.Text(),
        )
    local: ColumnElement[Any]
    if kind is FieldType.DATETIME:
        local = sa.func.timezone(sa.literal(zone), _instant_pg(col, stored))
    else:
        local = sa.cast(_day_pg(col, stored), sa.DateTime())
    if grain is None:
        return sa.cast(local, sa.Date())
    return sa.cast(sa.func.date_trunc(sa.literal(grain.value), local), sa.Date())


def is_time(kind: FieldType | None) -> bool:
    return kind in (FieldType.DATE, FieldType.DATETIME)


__all__ = ["SQLITE_FUNCTION", "is_time", "period_of", "period_start", "sqlite_period"]
