"""Dates and periods in a question, as ranges at the stated granularity.

A small grammar over the normalized text, relative to a given `now` (read in
UTC: calendar days, weeks, months and quarters are UTC ones):

* a named period is the whole period, [start, end): "2026年" is
  [2026-01-01, 2027-01-01); "上个月" the whole previous month; "today", "this
  week" (Monday on), "Q3" / "第三季度" (of now's year unless one is named),
  "in March 2026";
* a window ending now ("最近 7 天", "in the last 3 months", "the past week",
  "within the last year": "the" before last/past makes it one) is the N units
  up to now, now included: `DateRange.ends_now`, with `since` the
  instant N units before now and `until` now. `Builder.dates` turns it into
  whole days on a DATE field (today and the N-1 days before it) and into
  instants on a datetime field ([now - N units, now]);
* "since X" is from the start of X on, "after X" from its end on, "before X"
  up to its start; none of them has a second end.

A general parser (dateparser) returns points, not ranges, and costs 0.3 s to
import: a question condition needs the range the words state.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from qdsl.dsl.numerals import parse_chinese, parse_english

_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        start=1,
    )
    for m in names.split()
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_N = (
    r"(?P<n>\d+|[一二两三四五六七八九十]+|a|an|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|twelve)"
)
_UNIT_ZH = r"(?P<u>天|日|周|个?星期|个?礼拜|个月|月|年)"
_UNIT_EN = r"(?P<u>days?|weeks?|months?|years?)"


@dataclass(frozen=True)
class DateRange:
    start: int
    end: int
    since: datetime | None
    until: datetime | None
    # A window ending now (the last N units): `until` is now, and now is inside.
    ends_now: bool = False


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def _month(y: int, m: int) -> tuple[datetime, datetime]:
    nxt = _day(y + 1, 1, 1) if m == 12 else _day(y, m + 1, 1)
    return _day(y, m, 1), nxt


def _year(y: int) -> tuple[datetime, datetime]:
    return _day(y, 1, 1), _day(y + 1, 1, 1)


def _quarter(y: int, q: int) -> tuple[datetime, datetime]:
    first = 3 * (q - 1) + 1
    return _day(y, first, 1), _month(y, first + 2)[1]


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    if word in ("a", "an"):
        return 1
    zh = parse_chinese(word)
    if zh is not None:
        return int(zh)
    return parse_english(word)


def _months_back(now: datetime, n: int) -> datetime:
    """`now` n calendar months earlier, its day clamped to the month's length."""
    y, m = divmod(now.month - 1 - n, 12)
    year, month = now.year + y, m + 1
    return now.replace(
        year=year, month=month, day=min(now.day, calendar.monthrange(year, month)[1])
    )


def _back(now: datetime, n: int, unit: str) -> datetime:
    if unit[0] in "天日d":
        return now - timedelta(days=n)
    if unit[0] in "周星礼w":
        return now - timedelta(weeks=n)
    if "月" in unit or unit.startswith("month"):
        return _months_back(now, n)
    return _months_back(now, 12 * n)


def _relative(now: datetime) -> list[tuple[str, tuple[datetime, datetime]]]:
    """The relative periods (pattern, range) as of `now`."""
    today = _day(now.year, now.month, now.day)
    last_m = _month(now.year - 1, 12) if now.month == 1 else _month(now.year, now.month - 1)
    this_m = _month(now.year, now.month)
    week0 = today - timedelta(days=today.weekday())
    q = (now.month - 1) // 3 + 1
    last_q = _quarter(now.year - 1, 4) if q == 1 else _quarter(now.year, q - 1)
    return [
        (r"今年|本年度?|\bthis year\b", _year(now.year)),
        (r"去年|\blast year\b", _year(now.year - 1)),
        (r"前年|\bthe year before last\b", _year(now.year - 2)),
        (r"本月|这个月|\bthis month\b", this_m),
        (r"上个?月|\blast month\b", last_m),
        (r"今天|今日|\btoday\b", (today, today + timedelta(days=1))),
        (r"昨天|昨日|\byesterday\b", (today - timedelta(days=1), today)),
        (r"本周|这周|这个?星期|\bthis week\b", (week0, week0 + timedelta(days=7))),
        (r"上周|上个?星期|\blast week\b", (week0 - timedelta(days=7), week0)),
        (r"本季度?|这个?季度|\bthis quarter\b", _quarter(now.year, q)),
        (r"上个?季度|\blast quarter\b", last_q),
    ]


# The relative periods' patterns, compiled once; their ranges depend on `now`
# and are computed only for a question that names one.
_RELATIVE = tuple(re.compile(p) for p, _ in _relative(datetime(2000, 6, 15, tzinfo=UTC)))

_ABSOLUTE = tuple(
    re.compile(p)
    for p in (
        r"(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]",
        r"(?<![\d-])(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d-])",
        _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})",
        r"(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月(?:份)?",
        _MONTH + r",?\s+(?P<y>\d{4})",
        r"(?P<y>\d{4})\s*年(?:度)?",
        r"(?<=\bin )(?P<y>(?:19|20)\d{2})(?![\d-])",
        r"(?<=\bsince )(?P<y>(?:19|20)\d{2})(?![\d-])",
        r"(?<=\bbefore )(?P<y>(?:19|20)\d{2})(?![\d-])",
        r"(?<=\bafter )(?P<y>(?:19|20)\d{2})(?![\d-])",
        r"(?<=\bduring )(?P<y>(?:19|20)\d{2})(?![\d-])",
    )
)
# Every absolute pattern holds a four-digit year.
_YEAR = re.compile(r"\d{4}")

_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3}
_ORDINAL.update({"4th": 4, "一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4})
_QUARTERS = tuple(
    re.compile(p)
    for p in (
        r"(?:(?P<y>\d{4})\s*年?\s*)?(?<![a-z0-9])q(?P<q>[1-4])(?![a-z0-9])(?:\s*(?P<y2>\d{4}))?",
        r"(?:(?P<y>\d{4})\s*年\s*)?第?(?P<q>[一二三四1-4])\s*季度",
        r"\bthe (?P<q>first|second|third|fourth|1st|2nd|3rd|4th) quarter(?: of (?P<y2>\d{4}))?",
    )
)


def _quarters(text: str, now: datetime) -> Iterator[tuple[int, int, datetime, datetime]]:
    if "q" not in text and "季度" not in text and "quarter" not in text:
        return
    for pat in _QUARTERS:
        for m in pat.finditer(text):
            g = m.groupdict()
            year = g.get("y") or g.get("y2")
            yield m.start(), m.end(), *_quarter(int(year) if year else now.year, _ORDINAL[g["q"]])


def _absolute(text: str) -> Iterator[tuple[int, int, datetime, datetime]]:
    if _YEAR.search(text) is None:
        return
    for pat in _ABSOLUTE:
        for m in pat.finditer(text):
            g = m.groupdict()
            try:
                y = int(g["y"])
                mon = int(g["m"]) if g.get("m") else _MONTHS.get(g.get("mon") or "")
                if g.get("d") and mon:
                    lo = _day(y, mon, int(g["d"]))
                    yield m.start(), m.end(), lo, lo + timedelta(days=1)
                elif mon:
                    yield m.start(), m.end(), *_month(y, mon)
                else:
                    yield m.start(), m.end(), *_year(y)
            except ValueError:
                continue


_SINCE_BEFORE = re.compile(r"(?:\bsince|\bfrom|\bstarting|自从|自|从)\s*$")
_SINCE_AFTER = re.compile(r"^\s*(?:以来|起|开始|至今|以后(?=开始))")
_AFTER_BEFORE = re.compile(r"(?:\bafter|\blater than|晚于)\s*$")
_AFTER_AFTER = re.compile(r"^\s*(?:之后|以后|后)")
_UNTIL_BEFORE = re.compile(r"(?:\bbefore|\bprior to|\bearlier than|早于)\s*$")
_UNTIL_AFTER = re.compile(r"^\s*(?:之前|以前|前)")
_IN_BEFORE = re.compile(r"(?:\bin|\bduring|\bin the year|\bwithin)\s*$")


def _with_direction(
    text: str, s: int, e: int, lo: datetime, hi: datetime
) -> tuple[int, int, datetime | None, datetime | None]:
    before, after = text[max(0, s - 16) : s], text[e : e + 6]
    for pat_b, pat_a, kind in (
        (_SINCE_BEFORE, _SINCE_AFTER, "since"),
        (_AFTER_BEFORE, _AFTER_AFTER, "after"),
        (_UNTIL_BEFORE, _UNTIL_AFTER, "until"),
    ):
        mb, ma = pat_b.search(before), pat_a.search(after)
        if mb or ma:
            s2 = s - (len(before) - mb.start()) if mb else s
            e2 = e + ma.end() if ma else e
            if kind == "since":
                return s2, e2, lo, None
            if kind == "after":
                return s2, e2, hi, None
            return s2, e2, None, lo
    mb = _IN_BEFORE.search(before)
    if mb:
        return s - (len(before) - mb.start()), e, lo, hi
    return s, e, lo, hi


_LAST_N = tuple(
    re.compile(p)
    for p in (
        r"(?:最近|近|过去|前)\s*" + _N + r"\s*" + _UNIT_ZH + r"(?:内|以来|里|中)?",
        r"(?:\bin\s+)?(?:\bthe\s+)?(?:last|past|previous)\s+" + _N + r"\s+" + _UNIT_EN,
        r"\bwithin\s+(?:the\s+)?(?:last\s+|past\s+)?" + _N + r"\s+" + _UNIT_EN,
        # "the past week", "within the last year": one unit counted back from now;
        # without "the", "last week" is the previous calendar week (`_relative`)
        r"(?:\b(?:in|within|over|during)\s+)?\bthe\s+(?:last|past)\s+(?P<n>)"
        r"(?P<u>day|week|month|year)\b",
    )
)


def find_dates(text: str, now: datetime) -> list[DateRange]:
    """Every date or period in `text` (normalized question text), longest first wins."""
    now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    found: list[tuple[int, int, datetime | None, datetime | None, bool]] = []
    named = [(i, m) for i, pat in enumerate(_RELATIVE) for m in pat.finditer(text)]
    if named:
        ranges = _relative(now)
        for i, m in named:
            lo, hi = ranges[i][1]
            found.append((*_with_direction(text, m.start(), m.end(), lo, hi), False))
    for s, e, lo, hi in (*_absolute(text), *_quarters(text, now)):
        found.append((*_with_direction(text, s, e, lo, hi), False))
    for pat in _LAST_N:
        for m in pat.finditer(text):
            n = _count(m.group("n")) if m.group("n") else 1
            if n is not None and n > 0:
                found.append((m.start(), m.end(), _back(now, n, m.group("u")), now, True))
    kept: list[DateRange] = []
    for s, e, since, until, ends_now in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
        if any(k.start < e and s < k.end for k in kept):
            continue
        kept.append(DateRange(s, e, since, until, ends_now))
    return sorted(kept, key=lambda d: d.start)
