"""Relative time, with `now` fixed: one rule, zh and en, on DATE and datetime fields.

The rule (docs/plan-language.md "Dates and windows"): a named period is the whole
period, [start, end); a window ending now ("最近 7 天", "the last 3 months") is the
N units up to now with now inside: on a DATE field whole days, today and the N-1
days before it; on a datetime field the instants from N units before now through
now. Read on every catalog with a date field: the HR catalog's `hired_on` (DATE)
and the support desk's `agent.hired_at` (DATE), the demo's `project.created_at`
and the desk's `ticket.opened_at` (datetime).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog, demo_catalog, load_catalog
from qdsl.dsl.ir import Operator
from qdsl.dsl.question import problems_text, read_question

# A Wednesday afternoon: this week began on Monday 2026-11-02.
NOW = datetime(2026, 11, 4, 15, 30, tzinfo=UTC)
DEPLOYMENTS = Path(__file__).parents[1] / "deployments"
STAFF = load_catalog(DEPLOYMENTS / "staff" / "catalog.toml")
TICKETS = load_catalog(DEPLOYMENTS / "tickets" / "catalog.toml")
DEMO = demo_catalog()

_GTE, _LT, _LTE = Operator.GTE, Operator.LT, Operator.LTE
Bounds = set[tuple[Operator, str]]


def period(lo: str, hi: str) -> tuple[Bounds, Bounds]:
    """A named period: [lo, hi) as dates, and as instants at midnight UTC."""
    return (
        {(_GTE, lo), (_LT, hi)},
        {(_GTE, f"{lo}T00:00:00+00:00"), (_LT, f"{hi}T00:00:00+00:00")},
    )


def window(first_day: str, since: str) -> tuple[Bounds, Bounds]:
    """A window ending now: from `first_day` through today (DATE), from the
    instant `since` through now (datetime)."""
    return (
        {(_GTE, first_day), (_LT, "2026-11-05")},
        {(_GTE, since), (_LTE, NOW.isoformat())},
    )


def ray(op: Operator, day: str) -> tuple[Bounds, Bounds]:
    return {(op, day)}, {(op, f"{day}T00:00:00+00:00")}


# (zh phrase, en phrase, (bounds on a DATE field, bounds on a datetime field))
PHRASES: list[tuple[str, str, tuple[Bounds, Bounds]]] = [
    ("今天", "today", period("2026-11-04", "2026-11-05")),
    ("昨天", "yesterday", period("2026-11-03", "2026-11-04")),
    ("本周", "this week", period("2026-11-02", "2026-11-09")),
    ("上周", "last week", period("2026-10-26", "2026-11-02")),
    ("本月", "this month", period("2026-11-01", "2026-12-01")),
    ("上个月", "last month", period("2026-10-01", "2026-11-01")),
    ("今年", "this year", period("2026-01-01", "2027-01-01")),
    ("去年", "last year", period("2025-01-01", "2026-01-01")),
    ("最近7天", "in the last 7 days", window("2026-10-29", "2026-10-28T15:30:00+00:00")),
    ("最近 30 天", "in the past 30 days", window("2026-10-06", "2026-10-05T15:30:00+00:00")),
    ("最近两周", "in the last 2 weeks", window("2026-10-22", "2026-10-21T15:30:00+00:00")),
    ("过去一周", "in the past week", window("2026-10-29", "2026-10-28T15:30:00+00:00")),
    ("最近3个月", "in the last 3 months", window("2026-08-05", "2026-08-04T15:30:00+00:00")),
    ("近一年", "within the last year", window("2025-11-05", "2025-11-04T15:30:00+00:00")),
    ("近一个月", "in the last month", window("2026-10-05", "2026-10-04T15:30:00+00:00")),
    ("2025年以来", "since 2025", ray(_GTE, "2025-01-01")),
    ("2026年3月1日之前", "before 2026-03-01", ray(_LT, "2026-03-01")),
    ("2026年3月", "in March 2026", period("2026-03-01", "2026-04-01")),
    ("第三季度", "in Q3", period("2026-07-01", "2026-10-01")),
    ("2025年第四季度", "in Q4 2025", period("2025-10-01", "2026-01-01")),
    ("上季度", "last quarter", period("2026-07-01", "2026-10-01")),
]

# (catalog, field, its type, zh frame, en frame)
FIELDS: list[tuple[Catalog, str, str, str, str]] = [
    (STAFF, "hired_on", "date", "{p}入职的员工有哪些", "Which employees were hired {p}?"),
    (TICKETS, "hired_at", "date", "{p}入职的客服有哪些", "Which agents were hired {p}?"),
    (DEMO, "created_at", "datetime", "{p}创建的项目有哪些", "Which projects were created {p}?"),
    (TICKETS, "opened_at", "datetime", "{p}提交的工单有哪些", "Which tickets were opened {p}?"),
]

CASES = [
    pytest.param(cat, field, kind, frame.format(p=phrase), expected, id=frame.format(p=phrase))
    for cat, field, kind, zh, en in FIELDS
    for phrase_zh, phrase_en, bounds in PHRASES
    for frame, phrase, expected in (
        (zh, phrase_zh, bounds[0] if kind == "date" else bounds[1]),
        (en, phrase_en, bounds[0] if kind == "date" else bounds[1]),
    )
]


@pytest.mark.parametrize(("cat", "field", "kind", "question", "expected"), CASES)
def test_one_rule_for_every_phrasing(
    cat: Catalog, field: str, kind: str, question: str, expected: Bounds
) -> None:
    r = read_question(question, cat, now=NOW)
    assert r.problems == (), problems_text(r.problems, r.entity, r.language)
    assert {c.field for c in r.conditions} == {field}
    assert {(c.operator, c.value) for c in r.conditions} == expected


def test_the_last_seven_days_include_someone_hired_today() -> None:
    """The issue's row: "最近7天入职的员工有哪些" left today out."""
    r = read_question("最近7天入职的员工有哪些", STAFF, now=NOW)
    today = NOW.date().isoformat()
    bounds = {c.operator: c.value for c in r.conditions}
    assert bounds[_GTE] <= today < bounds[_LT]


def test_calendar_days_are_utc_days() -> None:
    # 01:00 on 5 November in Shanghai is still 4 November in UTC
    shanghai = NOW.replace(hour=17).astimezone(timezone(timedelta(hours=8)))
    r = read_question("今天入职的员工有哪些", STAFF, now=shanghai)
    assert {c.value for c in r.conditions} == {"2026-11-04", "2026-11-05"}


@given(
    st.integers(min_value=1, max_value=400),
    st.datetimes(
        min_value=datetime(2001, 1, 1), max_value=datetime(2098, 12, 31), timezones=st.just(UTC)
    ),
    st.sampled_from(
        ["最近{n}天入职的员工有哪些", "Which employees were hired in the last {n} days?"]
    ),
)
def test_a_window_of_n_days_is_n_whole_days_ending_today(n: int, now: datetime, frame: str) -> None:
    r = read_question(frame.format(n=n), STAFF, now=now)
    bounds = {c.operator: datetime.fromisoformat(str(c.value)).date() for c in r.conditions}
    assert bounds[_LT] - bounds[_GTE] == timedelta(days=n)
    assert bounds[_GTE] <= now.date() < bounds[_LT]


@given(
    st.integers(min_value=1, max_value=36),
    st.datetimes(
        min_value=datetime(2001, 1, 1), max_value=datetime(2098, 12, 31), timezones=st.just(UTC)
    ),
    st.sampled_from(["days", "weeks", "months"]),
)
def test_a_window_on_instants_ends_at_now(n: int, now: datetime, unit: str) -> None:
    r = read_question(f"Which projects were created in the last {n} {unit}?", DEMO, now=now)
    bounds = {c.operator: datetime.fromisoformat(str(c.value)) for c in r.conditions}
    assert bounds[_LTE] == now
    assert now - timedelta(days=31 * n + 1) <= bounds[_GTE] <= now - timedelta(days=n)
