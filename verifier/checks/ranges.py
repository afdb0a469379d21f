"""One range, however a plan spells it: the interval a field's range filters allow.

`question_covered` compares the interval the question states on a field with
the interval the plan's filters on that field allow, not filter by filter, so a
plan may say a range in any of its equivalent forms and still no wider or
narrower one passes. The filters on one field are intersected; the interval is
then written in one canonical form per field type:

* a DATE field holds whole days: `> d` is `>= d+1`, `<= d` is `< d+1`, and
  `between a and b` (inclusive at both ends) is `[a, b+1)`. So `between
  "2025-01-01" and "2025-12-31"` is the year 2025, the same as `>= "2025-01-01"
  and < "2026-01-01"`; `= d` (or `in (d)`) is the one day `[d, d+1)`;
* a datetime field holds instants to the microsecond (what both dialects store):
  `<= t` is `< t + 1µs`, `> t` is `>= t + 1µs`. So `between "2025-01-01" and
  "2025-12-31"` ends at the first instant of 2025-12-31 and is *not* the year
  2025; `between "2025-01-01T00:00:00" and "2025-12-31T23:59:59.999999"` is;
  a date without a time is its day's first instant, in UTC;
* a number field is continuous: bounds compare as written, each open or closed,
  and `between a and b` is `[a, b]`.

Values that are none of these (text) give no interval: such filters are then
compared one by one, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from qdsl.dsl.catalog import FieldSpec, FieldType
from qdsl.dsl.ir import Operator, Value

RANGE_OPERATORS = frozenset(
    {Operator.GT, Operator.GTE, Operator.LT, Operator.LTE, Operator.BETWEEN}
)
# Filters that, on an ordered field, state a range of one point.
POINT_OPERATORS = frozenset({Operator.EQUALS, Operator.IN})

_DAY = timedelta(days=1)
_INSTANT = timedelta(microseconds=1)
Key = date | datetime | float


@dataclass(frozen=True)
class End:
    """One end of an interval: a value, and whether the value itself is inside."""

    value: Key
    closed: bool


@dataclass(frozen=True)
class Interval:
    low: End | None = None  # None: unbounded
    high: End | None = None

    def text(self) -> str:
        lo = "(-∞" if self.low is None else ("[" if self.low.closed else "(") + _show(self.low)
        hi = "∞)" if self.high is None else _show(self.high) + ("]" if self.high.closed else ")")
        return f"{lo}, {hi}"


def _show(end: End) -> str:
    v = end.value
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else str(v)
    return v.isoformat()


def kind_of(spec: FieldSpec | None, values: Iterable[object]) -> FieldType | None:
    """The ordered type the values are compared as (the field's, else their shape's)."""
    if spec is not None:
        known = (FieldType.DATE, FieldType.DATETIME, FieldType.NUMBER)
        return spec.type if spec.type in known else None
    kinds = {_shape(v) for v in values}
    return kinds.pop() if len(kinds) == 1 else None


def _shape(value: object) -> FieldType | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return FieldType.NUMBER
    text = str(value)
    if len(text) == 10 and _day_of(text) is not None:
        return FieldType.DATE
    return FieldType.DATETIME if _instant_of(text) is not None else None


def _day_of(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        moment = _instant_of(text)
        if moment is not None and moment.time() == datetime.min.time():
            return moment.date()  # a day's first instant, on a field of days
        return None


def _instant_of(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _key(kind: FieldType, value: object) -> Key | None:
    if kind is FieldType.NUMBER:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None  # type: ignore[arg-type]
    if isinstance(value, bool | int | float):
        return None
    return _day_of(str(value)) if kind is FieldType.DATE else _instant_of(str(value))


def _bounds(kind: FieldType, op: Operator, value: Value) -> tuple[End | None, End | None] | None:
    """The ends one filter states (None: it states no range of comparable values)."""
    items = value if isinstance(value, tuple) else (value,)
    keys = [_key(kind, v) for v in items]
    if any(k is None for k in keys) or not keys:
        return None
    ks: list[Key] = [k for k in keys if k is not None]
    if op is Operator.BETWEEN and len(ks) == 2:
        return End(ks[0], True), End(ks[1], True)
    if op in POINT_OPERATORS and len(ks) == 1:
        return End(ks[0], True), End(ks[0], True)
    if len(ks) != 1:
        return None
    one = ks[0]
    return {
        Operator.GT: (End(one, False), None),
        Operator.GTE: (End(one, True), None),
        Operator.LT: (None, End(one, False)),
        Operator.LTE: (None, End(one, True)),
    }.get(op)


def _canonical(kind: FieldType, low: End | None, high: End | None) -> Interval:
    """Discrete values (days, microseconds) as [low, high): one spelling per interval."""
    step = {FieldType.DATE: _DAY, FieldType.DATETIME: _INSTANT}.get(kind)
    if step is None:
        return Interval(low, high)
    if low is not None and not low.closed:
        low = End(low.value + step, True)  # type: ignore[operator]
    if high is not None and high.closed:
        high = End(high.value + step, False)  # type: ignore[operator]
    return Interval(low, high)


def _tighter_low(a: End, b: End) -> End:
    if a.value != b.value:
        return a if a.value > b.value else b  # type: ignore[operator]
    return a if not a.closed else b


def _tighter_high(a: End, b: End) -> End:
    if a.value != b.value:
        return a if a.value < b.value else b  # type: ignore[operator]
    return a if not a.closed else b


def interval(spec: FieldSpec | None, filters: Sequence[tuple[Operator, Value]]) -> Interval | None:
    """What the filters (operator, value) on one field allow together; None when
    they are not all ranges of comparable values."""
    kind = kind_of(spec, (v for _, value in filters for v in _flat(value)))
    if kind is None or not filters:
        return None
    low: End | None = None
    high: End | None = None
    for op, value in filters:
        ends = _bounds(kind, op, value)
        if ends is None:
            return None
        one = _canonical(kind, *ends)
        lo, hi = one.low, one.high
        low = lo if low is None else (low if lo is None else _tighter_low(low, lo))
        high = hi if high is None else (high if hi is None else _tighter_high(high, hi))
    return Interval(low, high)


def _flat(value: Value) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)
