"""The periods a question names, as ranges relative to a fixed `now`.

A calendar period (2025, March 2026, last year, last month, last week,
yesterday) has one meaning. A period that holds `now` (this year, this month,
this week, today) ends at its calendar end or at now, by reading. A window
ending now ("the last 30 days") has a meaning up to its ends (is the first
day in? the rest of today?), and a week starts on Monday or on Sunday by
custom. So each `Period` carries `definite`, the range every reading includes,
and `possible`, the range some reading includes; a row between them may be
answered either way (tests/generated/oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

Range = tuple[datetime | None, datetime | None]  # [lo, hi); None is open


def _day(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def _month_start(y: int, m: int) -> datetime:
    y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
    return datetime(y, m, 1, tzinfo=UTC)


MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass(frozen=True)
class Period:
    zh: str
    en: str
    form: str
    definite: Range
    possible: Range


def _calendar(form: str, zh: str, en: str, lo: datetime | None, hi: datetime | None) -> Period:
    return Period(zh, en, form, (lo, hi), (lo, hi))


def _so_far(form: str, zh: str, en: str, span: tuple[datetime, datetime], now: datetime) -> Period:
    """A period now falls in: its part after now is in or out depending on the reading."""
    lo, hi = span
    return Period(zh, en, form, (lo, min(hi, now)), (lo, hi))


def _window(n: int, zh_unit: str, en_unit: str, days: int, now: datetime) -> Period:
    """The last n units, ending now: every reading holds the days since `days - 1` days ago
    (up to now); some also the day before, or the rest of today. Months are not all alike
    long, so their ends are known to within a few days."""
    today = _day(now.date())
    start = today - timedelta(days=days)
    slack = timedelta(days=3 if en_unit == "months" else 0)
    definite = (start + timedelta(days=1) + slack, now)
    possible = (start - slack, today + timedelta(days=1))
    return Period(
        f"最近{n}{zh_unit}", f"in the last {n} {en_unit}", f"window_{en_unit}", definite, possible
    )


def _week(form: str, zh: str, en: str, back: int, now: datetime) -> Period:
    """A week starts on Monday or on Sunday, by custom: only their common days are sure."""
    today = _day(now.date())
    monday = today - timedelta(days=today.weekday() + 7 * back)
    sunday = today - timedelta(days=(today.weekday() + 1) % 7 + 7 * back)
    lo, hi = max(monday, sunday), min(monday, sunday) + timedelta(days=7)
    sure = (lo, min(hi, now)) if back == 0 else (lo, hi)
    return Period(
        zh, en, form, sure, (min(monday, sunday), max(monday, sunday) + timedelta(days=7))
    )


def periods_of(now: datetime, moments: list[datetime]) -> list[Period]:
    """Every period a question may name, as of `now`, some around the data's own dates."""
    today = _day(now.date())
    year0, month0 = _month_start(now.year, 1), _month_start(now.year, now.month)
    out = [
        _so_far("this_year", "今年", "this year", (year0, _month_start(now.year + 1, 1)), now),
        _calendar("last_year", "去年", "last year", _month_start(now.year - 1, 1), year0),
        _so_far(
            "this_month", "本月", "this month", (month0, _month_start(now.year, now.month + 1)), now
        ),
        _calendar(
            "last_month", "上个月", "last month", _month_start(now.year, now.month - 1), month0
        ),
        _so_far("today", "今天", "today", (today, today + timedelta(days=1)), now),
        _calendar("yesterday", "昨天", "yesterday", today - timedelta(days=1), today),
        _week("this_week", "本周", "this week", 0, now),
        _week("last_week", "上周", "last week", 1, now),
        _window(7, "天", "days", 7, now),
        _window(30, "天", "days", 30, now),
        _window(2, "周", "weeks", 14, now),
        _window(3, "个月", "months", 91, now),
    ]
    for m in moments[:3]:
        y0, y1 = _month_start(m.year, 1), _month_start(m.year + 1, 1)
        out.append(_calendar("year", f"{m.year}年", f"in {m.year}", y0, y1))
        lo, hi = _month_start(m.year, m.month), _month_start(m.year, m.month + 1)
        out.append(
            _calendar(
                "month", f"{m.year}年{m.month}月", f"in {MONTHS[m.month - 1]} {m.year}", lo, hi
            )
        )
        out.append(Period(f"{m.year}年以来", f"since {m.year}", "since", (y0, now), (y0, None)))
        out.append(_calendar("before", f"{m.year}年之前", f"before {m.year}", None, y0))
    return out


def moment_of(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    return _day(value)
