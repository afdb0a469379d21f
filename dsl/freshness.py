"""When a fact is fresh: one definition for everything that judges it in Python.

A fact is fresh at `now` when it has not expired (`valid_until` is open or
later than `now`) and, under a window of `window_days`, was observed within it.
The executor's SQL predicate (`executor.predicates`) says the same in SQL; the
verifier and the demo data's tests call this, so they cannot drift.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def stale_reason(
    *,
    valid_until: datetime | None,
    observed_at: datetime | None,
    now: datetime,
    window_days: int | None,
) -> str | None:
    """Why a fact is stale at `now`, or None when it is fresh."""
    now = _aware(now)
    if valid_until is not None and _aware(valid_until) <= now:
        return f"valid only until {valid_until.date().isoformat()}"
    if (
        window_days is not None
        and observed_at is not None
        and _aware(observed_at) < now - timedelta(days=window_days)
    ):
        return f"observed {observed_at.date().isoformat()}, over {window_days} days ago"
    return None
