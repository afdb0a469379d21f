"""The judge of a measure asked as a value (sum, average, maximum, minimum of a number
field over the rows some conditions select), and the arithmetic the breakdown judge
shares: a value computed from rows, compared within float rounding."""

from __future__ import annotations

import math
from decimal import Decimal
from itertools import combinations
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the oracle imports the breakdowns, which import this)
    from generated.model import Deployment
    from generated.oracle import Expected
    from generated.questions import Question


def problems(dep: Deployment, q: Question, data: dict[str, Any], want: Expected) -> list[str]:
    """The function over the field's values of the rows the conditions select (a
    row the oracle cannot decide may count or not: either value is right)."""
    name = next(t.removeprefix("field:") for t in q.tags if t.startswith("field:"))
    function = next(t.removeprefix("function:") for t in q.tags if t.startswith("function:"))
    if data.get("function") != function or data.get("measure") != name:
        return [f"computes {data.get('function')}({data.get('measure')}), asked {function}({name})"]
    rows = {str(r["id"]): r for r in dep.rows_of(q.tenant, q.entity)}
    found, counted = data.get("value"), (data.get("rows") or {}).get("count")
    outcomes = []
    for ids in _between(want.definite, want.possible):
        values = [rows[i][name] for i in sorted(ids) if rows[i][name] is not None]
        outcomes.append((measure_of(function, values), len(values)))
    for value, n in outcomes:
        if counted == n and (
            found is value is None
            or (value is not None and found is not None and near(found, value))
        ):
            return []
    return [f"value {found!r} over {counted}, expected one of {outcomes}"]


def _between(definite: frozenset[str], possible: frozenset[str]) -> list[frozenset[str]]:
    """The row sets a right answer may have computed from: the sure rows and any of the
    undecided ones (every subset while they are few, else none or all of them)."""
    undecided = sorted(possible - definite)
    if len(undecided) > 6:
        return list(dict.fromkeys([definite, possible]))
    return [
        definite | frozenset(extra)
        for n in range(len(undecided) + 1)
        for extra in combinations(undecided, n)
    ]


def near(found: Any, wanted: Decimal | None) -> bool:
    """A computed value: averages and REAL columns carry float rounding; no value is
    only no value."""
    if wanted is None or found is None:
        return found is None and wanted is None
    if isinstance(found, bool) or not isinstance(found, int | float | Decimal):
        return False
    return math.isclose(float(found), float(wanted), rel_tol=1e-9, abs_tol=1e-6)


def measure_of(function: str, values: list[Any]) -> Decimal | None:
    if not values:
        return None
    numbers = [Decimal(v) for v in values]
    if function == "sum":
        return sum(numbers, Decimal(0))
    if function == "avg":
        return sum(numbers, Decimal(0)) / len(numbers)
    return max(numbers) if function == "max" else min(numbers)
