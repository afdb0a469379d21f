"""The online shop's rows (read with sqlite3) joined by hand, and its answer shapes.

Nothing here calls qdsl: each tenant's rows are read with plain SQL per
table, and relations are followed in Python by the ids the rows hold.
Calendar periods are read in the catalog's zone (Europe/Berlin).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from cases.oracle import Entity, Row, at, parse_time, read_table

NOW = at(2026, 6, 15, 12)
TENANTS = ("nordwind", "sunrise")
ZONE = ZoneInfo("Europe/Berlin")
TABLES = {
    "customer": "customers",
    "product": "products",
    "order": "orders",
    "order_line": "order_lines",
    "payment": "payments",
}


@dataclass
class Shop:
    """One tenant's rows, by entity, with the relations followed by id."""

    entities: dict[str, Entity]

    def __getitem__(self, name: str) -> Entity:
        return self.entities[name]

    def by_id(self, name: str) -> dict[Any, Row]:
        return {r["id"]: r for r in self.entities[name].rows}

    def customer_of(self, order: Row) -> Row:
        return self.by_id("customer")[order["customer_id"]]

    def payments_of(self, order: Row) -> list[Row]:
        return [p for p in self["payment"].rows if p["order_id"] == order["id"]]

    def lines_of(self, order: Row) -> list[Row]:
        return [ln for ln in self["order_line"].rows if ln["order_id"] == order["id"]]

    def orders_of(self, customer: Row) -> list[Row]:
        return [o for o in self["order"].rows if o["customer_id"] == customer["id"]]


def load(sqlite_path: str) -> dict[str, Shop]:
    out: dict[str, Shop] = {}
    tables = {name: read_table(sqlite_path, f"SELECT * FROM {t}") for name, t in TABLES.items()}
    for tenant in TENANTS:
        mine = {
            n: [dict(r) for r in rows if r["tenant_id"] == tenant] for n, rows in tables.items()
        }
        for r in mine["order"]:
            r["ordered_at"] = parse_time(r["ordered_at"])
        for r in mine["payment"]:
            r["paid_at"] = parse_time(r["paid_at"])
            r["refunded"] = bool(r["refunded"])
        for r in mine["customer"]:
            r["signed_up"] = date.fromisoformat(str(r["signed_up"]))
            r["newsletter"] = bool(r["newsletter"])
        out[tenant] = Shop({n: Entity(rows) for n, rows in mine.items()})
    return out


def month(moment: datetime) -> str:
    return f"{moment.astimezone(ZONE):%Y-%m}"


def year_is(name: str, year: int) -> Callable[[Row], bool]:
    def pred(r: Row) -> bool:
        value = r[name]
        local = value.astimezone(ZONE) if isinstance(value, datetime) else value
        return value is not None and local.year == year

    return pred


def num(value: float) -> float:
    """A value as a case states it: exact to the cent and beyond, without float noise."""
    return round(float(value), 6)


def aggregate(values: Iterable[float], function: str) -> dict[str, Any]:
    found = [float(v) for v in values]
    if function == "sum":
        value = math.fsum(found)
    elif function == "avg":
        value = math.fsum(found) / len(found)
    elif function == "max":
        value = max(found)
    else:
        value = min(found)
    # (exact: an answer is compared to 1e-9, finer than a rounding to the cent)
    return {"contract": "aggregate_with_basis", "value": value}


def ratio(numerator: float, denominator: float) -> dict[str, Any]:
    return {"contract": "aggregate_with_basis", "value": float(numerator) / float(denominator)}


def breakdown(
    rows: Iterable[Row], key: Callable[[Row], str], value: Callable[[Row], float] | None = None
) -> dict[str, float]:
    """Group key -> the count of its rows, or the sum of `value` over them."""
    out: dict[str, float] = defaultdict(float)
    for r in rows:
        out[key(r)] += 1 if value is None else float(value(r))
    return {k: num(v) for k, v in sorted(out.items())}


def table(groups: dict[str, float]) -> dict[str, Any]:
    return {"contract": "breakdown_table", "groups": groups}


def top(groups: dict[str, float], n: int) -> dict[str, float]:
    """The first n groups by value, refused when rank n ties (no single answer)."""
    ranked = sorted(groups.items(), key=lambda kv: -kv[1])
    if len(ranked) > n and ranked[n - 1][1] == ranked[n][1]:
        raise ValueError(f"tie at rank {n}: the question has no single answer")
    return dict(ranked[:n])
