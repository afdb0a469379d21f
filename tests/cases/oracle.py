"""Plain-Python answers over a deployment's rows, for the curated cases.

Nothing here calls qdsl's planner, executor or renderer: rows are read with
sqlite3 and every expectation is a filter written out by hand. SQL semantics
for NULL: a comparison with a missing value is false (so "refund under 500"
never counts a ticket without a refund).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

Row = dict[str, Any]
Pred = Callable[[Row], bool]


def parse_time(value: Any) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def read_table(path: str, sql: str) -> list[Row]:
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql)]
    finally:
        con.close()


def at(year: int, month: int = 1, day: int = 1, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def between(lo: datetime, hi: datetime, name: str) -> Pred:
    """lo <= row[name] < hi (a calendar period)."""
    return lambda r: r[name] is not None and lo <= r[name] < hi


def gt(name: str, v: float) -> Pred:
    return lambda r: r[name] is not None and r[name] > v


def gte(name: str, v: float) -> Pred:
    return lambda r: r[name] is not None and r[name] >= v


def lt(name: str, v: float) -> Pred:
    return lambda r: r[name] is not None and r[name] < v


def lte(name: str, v: float) -> Pred:
    return lambda r: r[name] is not None and r[name] <= v


def eq(name: str, v: Any) -> Pred:
    return lambda r: r[name] is not None and r[name] == v


def ne(name: str, v: Any) -> Pred:
    return lambda r: r[name] is not None and r[name] != v


def is_null(name: str) -> Pred:
    return lambda r: r[name] is None


def all_of(*preds: Pred) -> Pred:
    return lambda r: all(p(r) for p in preds)


@dataclass
class CaseFile:
    """Cases accumulated for one TOML file."""

    prefix: str
    defaults: dict[str, str]
    cases: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, question: str, tenant: str | None = None, *, or_clarify: bool = False, **expect: Any
    ) -> None:
        """One case; `or_clarify` when the catalog has no word or operator for what is asked
        (a field without synonyms, a negation the field does not allow, a name the tenant's
        data lacks): then a clarification is as right as the answer."""
        if or_clarify:
            expect = {"status": ["answered", "clarify"], **expect}
        case: dict[str, Any] = {
            "id": f"{self.prefix}-{len(self.cases) + 1:03d}",
            "question": question,
        }
        if tenant is not None and tenant != self.defaults.get("tenant"):
            case["tenant"] = tenant
        case["expect"] = {k: v for k, v in expect.items() if v is not None}
        self.cases.append(case)

    def toml(self, header: str) -> str:
        lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
        lines += ["", "[defaults]"]
        lines += [f"{k} = {_toml(v)}" for k, v in self.defaults.items()]
        for case in self.cases:
            lines += ["", "[[case]]"]
            lines += [f"{k} = {_toml(v)}" for k, v in case.items()]
        return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def ids_of(rows: Iterable[Row]) -> list[str]:
    return sorted((str(r["id"]) for r in rows), key=lambda s: (len(s), s))


@dataclass
class Entity:
    """One entity's rows of one tenant, with helpers that turn a filter into an expectation."""

    rows: list[Row]

    def where(self, *preds: Pred) -> list[Row]:
        return [r for r in self.rows if all(p(r) for p in preds)]

    def count(self, *preds: Pred) -> dict[str, Any]:
        return {"contract": "count_scalar", "count": len(self.where(*preds))}

    def exists(self, *preds: Pred) -> dict[str, Any]:
        found = self.where(*preds)
        return {"contract": "yes_no_with_evidence", "exists": bool(found), "ids": ids_of(found)}

    def listing(self, *preds: Pred) -> dict[str, Any]:
        found = self.where(*preds)
        return {"contract": "entity_list", "count": len(found), "ids": ids_of(found)}

    def aggregate(self, key: str, function: str, *preds: Pred) -> dict[str, Any]:
        """The function over the rows' values of `key` (rows without one are no values)."""
        values = [float(r[key]) for r in self.where(*preds) if r[key] is not None]
        table: dict[str, Callable[[list[float]], float]] = {
            "sum": math.fsum,
            "avg": lambda v: math.fsum(v) / len(v),
            "max": max,
            "min": min,
        }
        return {"contract": "aggregate_with_basis", "value": table[function](values)}

    def top(self, key: str, n: int, *, desc: bool, preds: tuple[Pred, ...] = ()) -> list[str]:
        """The ids of the first n by `key` (rows without a value never rank); ties refused."""
        found = [r for r in self.where(*preds) if r[key] is not None]
        found.sort(key=lambda r: r[key], reverse=desc)
        if len(found) > n and found[n - 1][key] == found[n][key]:
            raise ValueError(f"tie at rank {n} on {key}: the question has no single answer")
        return [str(r["id"]) for r in found[:n]]

    def one(self, ident: str) -> Row:
        (row,) = [r for r in self.rows if str(r["id"]) == ident]
        return row
