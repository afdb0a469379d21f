"""A measure per group (`breakdown ... measure sum(items) group by ...`) against a Python
oracle, on SQLite and PostgreSQL, two catalogs.

The breakdown tests' table (tests/executor/breakdown_support.py) with its INTEGER
column aggregated: sum, avg, min, max, count_distinct and declared measures (a sum,
and a ratio of the sum to the rows), grouped by text, enum, bool, date and time
grains. The oracle ranks the groups by their value (largest first, no value last,
then by key), and computes the total and "other" as the measure over every row and
over the rows of the cut groups, never as arithmetic of the shown groups.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from breakdown_support import SHOP, STAFF, TENANTS, key_order, load, oracle_key, rows
from breakdown_support import bd_engine as bd_engine  # noqa: PLC0414 - a fixture
from hypothesis import HealthCheck, given, settings
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds.breakdown import CITED_PER_GROUP
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute

Row = dict[str, Any]


def _ratio(values: list[int], members: list[Row]) -> float | None:
    return sum(values) / len(members) if values and members else None


# the measure clause, what it computes over a group's non-null values (and its rows)
_FUNCTIONS: dict[str, Callable[[list[int], list[Row]], Any]] = {
    "sum": lambda v, _m: sum(v) if v else None,
    "avg": lambda v, _m: sum(v) / len(v) if v else None,
    "min": lambda v, _m: min(v) if v else None,
    "max": lambda v, _m: max(v) if v else None,
    "count_distinct": lambda v, _m: len(set(v)),
}


def _measures(catalog: Catalog) -> list[tuple[str, Callable[[list[int], list[Row]], Any]]]:
    entity = next(iter(catalog.entities))
    number = next(n for n, f in catalog.entities[entity].fields.items() if f.column == "n")
    out = [(f"{fn}({number})", compute) for fn, compute in _FUNCTIONS.items()]
    # a declared sum; the ratio's denominator counts the rows, a NULL value among them
    out.append((f"{number}_total", _FUNCTIONS["sum"]))
    out.append((f"{number}_per_{entity}", _ratio))
    return out


def _value(members: list[Row], compute: Callable[[list[int], list[Row]], Any]) -> Any:
    return compute([r["n"] for r in members if r["n"] is not None], members)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def oracle(
    data: list[Row],
    tenant: str,
    *,
    keys: list[tuple[str, Grain | None]],
    zone: str,
    cap: int,
    compute: Callable[[list[int], list[Row]], Any],
) -> dict[str, Any]:
    members: dict[tuple[Any, ...], list[tuple[str, Row]]] = {}
    for i, row in enumerate(data):
        if row["tenant_id"] == tenant:
            key = tuple(oracle_key(row, c, g, zone) for c, g in keys)
            members.setdefault(key, []).append((f"i-{i:04d}", row))
    value = {k: _value([r for _, r in v], compute) for k, v in members.items()}

    def rank(k: tuple[Any, ...]) -> tuple[Any, ...]:
        v = value[k]
        return (v is None, -(v if v is not None else 0), key_order(k))

    ranked = sorted(members, key=rank)
    shown, cut = ranked[:cap], ranked[cap:]
    every = [r for v in members.values() for _, r in v]
    rest = [r for k in cut for _, r in members[k]]
    return {
        "groups": [
            {
                "keys": list(k),
                "value": value[k],
                "rows": len(members[k]),
                "ids": sorted(i for i, _ in members[k])[:CITED_PER_GROUP],
            }
            for k in shown
        ],
        "total": _value(every, compute),
        "other": _value(rest, compute) if cut else None,
        "truncated": bool(cut),
        "rows": len(every),
    }


_GROUPINGS: list[tuple[Catalog, str, list[tuple[str, Grain | None]]]] = [
    (SHOP, "channel", [("kind", None)]),
    (SHOP, "city", [("city", None)]),
    (SHOP, "paid, channel", [("flag", None), ("kind", None)]),
    (SHOP, "placed_on week", [("day", Grain.WEEK)]),
    (SHOP, "delivered_at day", [("at_tz", Grain.DAY)]),
    (STAFF, "review_at year, grade", [("at_tz", Grain.YEAR), ("kind", None)]),
    (STAFF, "hired_on month", [("day", Grain.MONTH)]),
    (STAFF, "remote", [("flag", None)]),
]


@pytest.mark.parametrize("cap", [1, 50])
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=rows)
def test_measures_per_group_agree_with_the_oracle(
    bd_engine: Engine, cap: int, data: list[Row]
) -> None:
    load(bd_engine, data)
    for catalog, by, keys in _GROUPINGS:
        entity = next(iter(catalog.entities))
        for measure, compute in _measures(catalog):
            source = f"breakdown {entity} measure {measure} group by {by} limit {cap}"
            plan = compile_source(source, catalog, None).plan
            for tenant in TENANTS:
                result = execute(plan, catalog, bd_engine, tenant)
                want = oracle(
                    data, tenant, keys=keys, zone=catalog.timezone, cap=cap, compute=compute
                )
                got = {k: result.data[k] for k in want}
                assert _rounded(got) == _rounded(want), (source, tenant, got, want)
                assert result.count == want["rows"]
                cited = {r.entity_id for r in result.rows}
                assert cited == {i for g in want["groups"] for i in g["ids"]}
                assert all(r.tenant_id == tenant for r in result.rows)


def test_a_count_measure_is_the_count_breakdown() -> None:
    counted = compile_source("breakdown order measure count() group by channel", SHOP, None)
    plain = compile_source("breakdown order group by channel", SHOP, None)
    assert counted.plan == plain.plan


@pytest.mark.parametrize(
    ("measure", "subtype"),
    [
        ("sum(city)", "aggregation_not_allowed"),
        ("avg(card)", "sensitive_field"),
        ("total_revenue", "unknown_measure"),
        ("sum(nothing)", "unknown_field"),
    ],
)
def test_a_measure_the_catalog_does_not_allow_is_refused_as_a_plan(
    measure: str, subtype: str
) -> None:
    with pytest.raises(QdslError) as caught:
        compile_source(f"breakdown order measure {measure} group by channel", SHOP, None)
    assert caught.value.subtype == subtype


def test_an_empty_tenant_has_no_groups_and_no_total(bd_engine: Engine) -> None:
    load(bd_engine, [])
    plan = compile_source("breakdown order measure avg(items) group by channel", SHOP, None).plan
    result = execute(plan, SHOP, bd_engine, TENANTS[0])
    assert result.data["groups"] == [] and result.data["total"] is None
    assert result.data["rows"] == 0 and not math.isnan(result.count or 0)
