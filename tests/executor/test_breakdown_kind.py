"""The `breakdown` kind against a Python oracle, on SQLite and PostgreSQL, two catalogs.

Two hand-written catalogs of other domains (a shop's orders in Asia/Shanghai,
a staff list in America/New_York) read one table of many column types: TEXT,
INTEGER, BOOLEAN, DATE, TIMESTAMP and TIMESTAMPTZ (text on SQLite, written with
offsets). Hypothesis writes the rows (two tenants, NULLs, instants near the
turn of a month and a year, so the catalog's zone moves them); the oracle groups
them in Python: the groups (largest first, then by key, NULL last), their
counts, the members each cites, the total, "other" and whether groups were cut.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from breakdown_support import SHOP, STAFF, TENANTS, key_order, load, oracle_key, rows
from breakdown_support import bd_engine as bd_engine  # noqa: PLC0414 - a fixture
from hypothesis import HealthCheck, given, settings
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds.breakdown import CITED_PER_GROUP
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute


def oracle(
    data: list[dict[str, Any]],
    tenant: str,
    *,
    keys: list[tuple[str, Grain | None]],
    zone: str,
    cap: int,
    where: Callable[[dict[str, Any]], bool] = lambda _r: True,
) -> dict[str, Any]:
    members: dict[tuple[Any, ...], list[str]] = {}
    for i, row in enumerate(data):
        if row["tenant_id"] == tenant and where(row):
            key = tuple(oracle_key(row, c, g, zone) for c, g in keys)
            members.setdefault(key, []).append(f"i-{i:04d}")
    counts = Counter({k: len(v) for k, v in members.items()})
    ranked = sorted(counts, key=lambda k: (-counts[k], key_order(k)))
    shown = ranked[:cap]
    total = sum(counts.values())
    return {
        "groups": [
            {"keys": list(k), "value": counts[k], "ids": sorted(members[k])[:CITED_PER_GROUP]}
            for k in shown
        ],
        "total": total,
        "other": total - sum(counts[k] for k in shown),
        "truncated": len(ranked) > cap,
    }


def _items_counted(row: dict[str, Any]) -> bool:
    return row["n"] is not None and row["n"] >= 0


def _grade_a(row: dict[str, Any]) -> bool:
    return bool(row["kind"] == "a")


# (catalog, group by clause, the columns and grains it means, a filter and its oracle)
_PLANS: list[tuple[Catalog, str, list[tuple[str, Grain | None]], str, Any]] = [
    (SHOP, "channel", [("kind", None)], "", None),
    (SHOP, "city", [("city", None)], "", None),
    (SHOP, "paid, channel", [("flag", None), ("kind", None)], "", None),
    (SHOP, "items", [("n", None)], " where items >= 0", _items_counted),
    (SHOP, "placed_on", [("day", None)], "", None),
    (SHOP, "placed_on week", [("day", Grain.WEEK)], "", None),
    (SHOP, "shipped_at month", [("at_ts", Grain.MONTH)], "", None),
    (SHOP, "delivered_at day", [("at_tz", Grain.DAY)], "", None),
    (STAFF, "review_at year, grade", [("at_tz", Grain.YEAR), ("kind", None)], "", None),
    (STAFF, "badge_at quarter", [("at_ts", Grain.QUARTER)], "", None),
    (STAFF, "badge_at week", [("at_ts", Grain.WEEK)], "", None),
    (STAFF, "hired_on month", [("day", Grain.MONTH)], ' where grade = "a"', _grade_a),
    (STAFF, "remote", [("flag", None)], "", None),
]


@pytest.mark.parametrize("cap", [2, 50])
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=rows)
def test_breakdowns_agree_with_the_oracle(
    bd_engine: Engine, cap: int, data: list[dict[str, Any]]
) -> None:
    load(bd_engine, data)
    for catalog, by, keys, where, keep in _PLANS:
        entity = next(iter(catalog.entities))
        plan = compile_source(
            f"breakdown {entity}{where} group by {by} limit {cap}", catalog, None
        ).plan
        for tenant in TENANTS:
            result = execute(plan, catalog, bd_engine, tenant)
            want = oracle(
                data,
                tenant,
                keys=keys,
                zone=catalog.timezone,
                cap=cap,
                where=keep or (lambda _r: True),
            )
            got = {k: result.data[k] for k in ("groups", "total", "other", "truncated")}
            assert got == want, (by, tenant, got, want)
            assert result.count == want["total"]
            cited = {r.entity_id for r in result.rows}
            assert cited == {i for g in want["groups"] for i in g["ids"]}
            assert all(r.tenant_id == tenant for r in result.rows)
