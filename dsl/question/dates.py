"""Dates and periods in a question, as ranges at the stated granularity.

A small grammar over the normalized text, relative to a given `now`:
"2026年" is [2026-01-01, 2027-01-01); "上个月" the whole previous month;
"最近 7 天" / "in the last 7 days" [now - 7 days, now); "since 2020" from
2020-01-01 on; "before 2021-03-01" up to that day; "in March 2026" that month.
A general parser (dateparser) returns points, not ranges, and costs 0.3 s to
import: a question condition needs the range the words state.
"""

from __future__ import annotations

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


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def _month(y: int, m: int) -> tuple[datetime, datetime]:
    nxt = _day(y + 1, 1, 1) if m == 12 else _day(y, m + 1, 1)
    return _day(y, m, 1), nxt


def _year(y: int) -> tuple[datetime, datetime]:
    return _day(y, 1, 1), _day(y + 1, 1, 1)


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    if word in ("a", "an"):
        return 1
    zh = parse_chinese(word)
    if zh is not None:
        return int(zh)
    return parse_english(word)


def _back(now: datetime, n: int, unit: str) -> datetime:
    if unit[0] in "天日d":
        return now - timedelta(days=n)
    if unit[0] in "周星礼w":
        return now - timedelta(weeks=n)
    if "月" in unit or unit.startswith("month"):
        y, m = divmod(now.month - 1 - n, 12)
        day = min(now.day, 28)
        return now.replace(year=now.year + y, month=m + 1, day=day)
    return now.replace(year=now.year - n, day=min(now.day, 28))


def _relative(now: datetime) -> list[tuple[str, tuple[datetime, datetime]]]:
    """The relative periods (pattern, range) as of `now`."""
    today = _day(now.year, now.month, now.day)
    last_m = _month(now.year - 1, 12) if now.month == 1 else _month(now.year, now.month - 1)
    this_m = _month(now.year, now.month)
    week0 = today - timedelta(days=today.weekday())
    return [
        (r"今年|本年度?|\bthis year\b", _year(now.year)),
        (r"去年|\blast year\b", _year(now.year - 1)),
        (r"前年|\bthe year before last\b", _year(now.year - 2)),
        (r"本月|这个月|\bthis month\b", this_m),
        (r"上个?月|\blast month\b", last_m),
        (r"今天|今日|\btoday\b", (today, today + timedelta(days=1))),
        (r"昨天|昨日|\byesterday\b", (today - timedelta(days=1), today)),
        (r"本周|这周|这个星期|\bthis week\b", (week0, week0 + timedelta(days=7))),
        (r"上周|上个星期|\blast week\b", (week0 - timedelta(days=7), week0)),
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
    )
)


def find_dates(text: str, now: datetime) -> list[DateRange]:
    """Every date or period in `text` (normalized question text), longest first wins."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    found: list[tuple[int, int, datetime | None, datetime | None]] = []
    named = [(i, m) for i, pat in enumerate(_RELATIVE) for m in pat.finditer(text)]
    if named:
        ranges = _relative(now)
        for i, m in named:
            lo, hi = ranges[i][1]
            found.append(_with_direction(text, m.start(), m.end(), lo, hi))
    for s, e, lo, hi in _absolute(text):
        found.append(_with_direction(text, s, e, lo, hi))
    for pat in _LAST_N:
        for m in pat.finditer(text):
            n = _count(m.group("n"))
            if n is not None and n > 0:
                found.append((m.start(), m.end(), _back(now, n, m.group("u")), now))
    kept: list[DateRange] = []
    for s, e, since, until in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
        if any(k.start < e and s < k.end for k in kept):
            continue
        kept.append(DateRange(s, e, since, until))
    return sorted(kept, key=lambda d: d.start)
