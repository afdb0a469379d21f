"""Calendar periods: what a catalog lets a date field be grouped by and a plan names."""

from __future__ import annotations

from enum import StrEnum


class Grain(StrEnum):
    """Calendar periods a date or datetime field may be grouped by (a week starts Monday)."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    QUARTER = "quarter"
    YEAR = "year"
