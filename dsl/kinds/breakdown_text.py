"""A breakdown's answer: its groups with their counts, "other" when cut, the total and
the basis (the filters), in zh or en; enum values as other answers show them.

"按渠道：甲（a） 3，乙（b） 2，其他 1；共 6 个订单。依据：…",
"Orders by channel: a 3, b 2, other 1; 6 in all. Evidence: …"; a measure per group
names its measure and the rows it was computed over: "Total amount of payments by
method: card 3,015.66, paypal 1,039.6; 4,055.26 in all (over 27). Evidence: …".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds.aggregate import measure_named, rounded
from qdsl.dsl.kinds.hooks import RenderContext


def _basis(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def render(c: RenderContext) -> tuple[str, dict[str, Any], list[str]]:
    read = c.result.data
    groupings = [
        _Read(g["field"], None if g["grain"] is None else Grain(g["grain"]))
        for g in read["group_by"]
    ]
    filters = [
        {"field": f.field, "operator": f.operator.value, "value": _basis(f.value)}
        for f in c.plan.filters
    ]
    data = {
        "groups": read["groups"],
        "total": read["total"],
        "other": read["other"],
        "truncated": read["truncated"],
        "group_by": read["group_by"],
        "filters": filters,
        "measure": read["measure"],
        "function": read["function"],
        "rows": read["rows"],
    }
    measured = read["function"] != "count"
    by = ("、" if c.zh else ", ").join(_by(c, g) for g in groupings)
    if not read["groups"]:
        text = (
            f"没有{c.many}{c.where()}，无法按{by}统计。"
            if c.zh
            else f"No {c.many}{c.where()} to break down by {by}."
        )
        return text, data, []
    sep = "，" if c.zh else ", "
    parts = [
        f"{_keys_shown(c, groupings, g['keys'], g.get('labels'))} {_value(c, g['value'], measured)}"
        for g in read["groups"]
    ]
    if read["truncated"]:
        parts.append(f"{'其他' if c.zh else 'other'} {_value(c, read['other'], measured)}")
    cites = c.evidence_ids()
    listed = sep.join(parts)
    if measured:
        what, total, n = measure_named(c, read), _value(c, read["total"], True), read["rows"]
        if c.zh:
            text = (
                f"按{by}，{c.many}{c.where()}的{what}：{listed}；"
                f"全部 {total}（共 {n} 条）。依据：{c.cite(cites)}"
            )
        else:
            what = what[:1].upper() + what[1:]
            text = (
                f"{what} of {c.many}{c.where()} by {by}: {listed}; {total} in all "
                f"(over {n}). Evidence: {c.cite(cites)}"
            )
        return text, data, cites
    if c.zh:
        text = f"按{by}：{listed}；共 {read['total']} 个{c.one}{c.where()}。依据：{c.cite(cites)}"
    else:
        head = c.many[:1].upper() + c.many[1:]
        text = (
            f"{head}{c.where()} by {by}: {listed}; {read['total']} in all. "
            f"Evidence: {c.cite(cites)}"
        )
    return text, data, cites


def _value(c: RenderContext, value: Any, measured: bool) -> str:
    if not measured:
        return str(value)
    if value is None:
        return "无值" if c.zh else "no value"
    return c.shown(rounded(value))


@dataclass(frozen=True)
class _Read:
    """A grouping as the result states it."""

    field: str
    grain: Grain | None


def _key_shown(c: RenderContext, g: _Read, key: Any) -> str:
    if key is None:
        return "无" if c.zh else "none"
    if isinstance(key, bool):
        return ("是" if key else "否") if c.zh else ("yes" if key else "no")
    return str(key) if g.grain is not None else c.value_shown(g.field, key)


_GRAIN_ZH = {"day": "日", "week": "周", "month": "月", "quarter": "季度", "year": "年"}


def _by(c: RenderContext, g: _Read) -> str:
    name = c.field(g.field)
    if g.grain is None:
        return name
    return f"{name}（{_GRAIN_ZH[g.grain.value]}）" if c.zh else f"{name} ({g.grain.value})"


def _keys_shown(
    c: RenderContext, groupings: Sequence[_Read], keys: Sequence[Any], labels: Any
) -> str:
    """A group's keys; a related object by its label and id ("Felix Hoffmann (6)")."""
    named = labels if isinstance(labels, list) else [None] * len(keys)
    words = [
        _key_shown(c, g, k) if label is None or k is None else f"{label} ({k})"
        for g, k, label in zip(groupings, keys, named, strict=True)
    ]
    return " / ".join(str(w) for w in words)
