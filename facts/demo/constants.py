"""The demo's fixed clock, tenants and published facts, importable without building any data.

Kept apart from facts.demo.data so that `facts.db` (imported on every CLI
call) does not pay for the catalog and the demo builder. The published facts
are what tests may rely on; tests/facts/test_demo_data.py checks them against
the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime

# Freshness in the demo is judged against this instant, never the wall clock.
DEMO_NOW = datetime(2026, 11, 1, tzinfo=UTC)
DEMO_SEED = 20261101
DEMO_TENANTS: tuple[str, ...] = ("t1", "t2", "t3")

T1_A_SHARE_FRESH: frozenset[str] = frozenset({"60", "61", "62", "64", "70"})
T1_A_SHARE_STALE: frozenset[str] = frozenset({"66", "67"})
T1_A_SHARE: frozenset[str] = T1_A_SHARE_FRESH | T1_A_SHARE_STALE
T1_HK: frozenset[str] = frozenset({"63", "65", "70"})
T1_HK_TEXT_ONLY: frozenset[str] = frozenset({"68"})  # 港股 in the summary, no fact
T2_HK: frozenset[str] = frozenset({"64", "81", "84"})
T2_US: frozenset[str] = frozenset({"65", "80", "83"})
T2_US_STALE: frozenset[str] = frozenset({"83"})
T3_PROJECT_COUNT = 300
T3_TASK_COUNT = 600
T1_TASKS_OF_64: frozenset[str] = frozenset({"1", "2", "3", "4", "5", "6"})
T1_FAILED_RUNS: frozenset[str] = frozenset({"12", "15"})
T1_LATEST_FAILED_RUN = "15"
T1_RUN_12_ERRORS: tuple[str, ...] = (
    "count substitution: answered the tenant's total of 14 projects instead of the 5 A股 projects",
    "stale fact used: market_theme of project 66 expired on 2026-06-30",
)


def t3_a_share_ids() -> frozenset[str]:
    """t3 projects with an A股 fact: every 7th project, and 64."""
    return frozenset({str(i) for i in range(1, T3_PROJECT_COUNT + 1) if i % 7 == 0} | {"64"})
