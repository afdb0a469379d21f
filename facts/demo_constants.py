"""The demo's fixed clock and tenants, importable without building any demo data.

Kept apart from facts.demo_data so that `facts.db` (imported on every CLI
call) does not pay for the catalog and the demo builder.
"""

from __future__ import annotations

from datetime import UTC, datetime

# Freshness in the demo is judged against this instant, never the wall clock.
DEMO_NOW = datetime(2026, 11, 1, tzinfo=UTC)
DEMO_SEED = 20261101
DEMO_TENANTS: tuple[str, ...] = ("t1", "t2", "t3")
