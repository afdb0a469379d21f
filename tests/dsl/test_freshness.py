"""One freshness rule for the verifier and the facts repository (and the executor's SQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from qdsl.dsl.freshness import stale_reason

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _reason(valid_until: datetime | None, observed_at: datetime, window: int | None) -> str | None:
    return stale_reason(
        valid_until=valid_until, observed_at=observed_at, now=NOW, window_days=window
    )


def test_open_and_recent_is_fresh() -> None:
    assert _reason(None, NOW - timedelta(days=1), 30) is None


def test_expiring_exactly_now_is_stale_as_in_the_executor_sql() -> None:
    # executor.predicates keeps `valid_until > now`; the boundary belongs to stale.
    assert _reason(NOW, NOW - timedelta(days=1), None) == "valid only until 2026-11-01"
    assert _reason(NOW + timedelta(seconds=1), NOW - timedelta(days=1), None) is None


def test_window_counts_from_now() -> None:
    edge = NOW - timedelta(days=30)
    assert _reason(None, edge, 30) is None
    assert _reason(None, edge - timedelta(seconds=1), 30) == (
        "observed 2026-10-01, over 30 days ago"
    )
    assert _reason(None, edge - timedelta(days=400), None) is None


def test_naive_instants_are_read_as_utc() -> None:
    assert _reason(datetime(2026, 10, 31), datetime(2026, 10, 30), 30) == (
        "valid only until 2026-10-31"
    )
