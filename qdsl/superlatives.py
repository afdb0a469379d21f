"""The answer to "who has the highest salary": the object and the value it tops.

A list plan sorted on one field and cut to one row asks for the top (or bottom)
object; answering it as "9 employees found, showing 1" names the object but not
what makes it the answer. The value comes from the row when the plan projected
the sort field (the rule planner does); without it, or when the top row holds no
value, the caller keeps the plain list sentence.

Several rows may hold the top value (two employees earn the most). Naming the
first one read would be a choice the data does not make, so the pipeline runs
such a plan with room for ties (`widened`), keeps the rows that tie with the
first (`tied`: the plan's limit becomes their number, which the verifier accepts
only for rows that tie, `ties_read`) and the sentence names each of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.dsl.ir import Plan, QueryType, SortDirection
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.phrases import field_name, field_spec, plain
from qdsl.verifier.ties import ties_read

# Rows read to find those that tie with the first; when all of them tie, the
# sentence says there are more (how many hold the value is not read).
TIE_ROWS = 10

# (zh, en) words for the first row's place, by the sort field's kind and direction
_WORDS: dict[tuple[str, SortDirection], tuple[str, str]] = {
    ("number", SortDirection.DESC): ("最高", "highest"),
    ("number", SortDirection.ASC): ("最低", "lowest"),
    ("time", SortDirection.DESC): ("最晚", "latest"),
    ("time", SortDirection.ASC): ("最早", "earliest"),
}


def _kind(spec: EntitySpec | None, name: str) -> str | None:
    field = field_spec(spec, name)
    if field is None:
        return None
    if field.type is FieldType.NUMBER:
        return "number"
    if field.type in (FieldType.DATE, FieldType.DATETIME):
        return "time"
    return None


def _noun(spec: EntitySpec | None, name: str, zh: bool) -> str:
    """The field as a noun after "the highest": an English synonym that is not a
    participle ("hire date", not "hired"), else the field's usual name."""
    field = field_spec(spec, name)
    if not zh and field is not None:
        for word in field.synonyms:
            if word.isascii() and not word.endswith("ed"):
                return word
    return field_name(field, name, "zh" if zh else "en")


def _top_field(plan: Plan, spec: EntitySpec | None) -> str | None:
    """The number or date field a one-row sorted list tops, when its rows show it."""
    if plan.query_type is not QueryType.LIST or plan.limit != 1 or len(plan.sort) != 1:
        return None
    name = plan.sort[0].field
    if _kind(spec, name) is None or name not in plan.projection:
        return None
    return name


def widened(plan: Plan, spec: EntitySpec | None) -> Plan | None:
    """A one-row superlative with room for the rows that tie with its first (the
    same filters and sort); None for any other plan."""
    if spec is None or _top_field(plan, spec) is None:
        return None
    room = min(TIE_ROWS, spec.max_limit)
    return plan.model_copy(update={"limit": room}) if room > 1 else None


# widened bound plans by the bound plan they widen: the executor prepares a
# plan's statements once per plan object, so a question asked again reuses them
_WIDE: dict[int, tuple[BoundPlan, BoundPlan]] = {}
_WIDE_SIZE = 256
_WIDE_LOCK = threading.Lock()


def widened_bound(bound: BoundPlan | None, wide: Plan) -> BoundPlan | Plan:
    """What the executor runs for `wide`: `bound` with the widened limit (the limit
    binds nothing, so the binding stays), the same object for the same `bound`."""
    if bound is None:
        return wide
    with _WIDE_LOCK:
        hit = _WIDE.get(id(bound))
        if hit is not None and hit[0] is bound:
            return hit[1]
        made = replace(bound, plan=wide)
        if len(_WIDE) >= _WIDE_SIZE:
            _WIDE.pop(next(iter(_WIDE)))
        _WIDE[id(bound)] = (bound, made)
        return made


def tied(
    plan: Plan, spec: EntitySpec | None, result: ExecutionResult
) -> tuple[Plan, ExecutionResult]:
    """`plan` (one row) and the result of its `widened` plan, cut to the rows that
    tie with the first: `plan` and one row when none does, else the plan limited
    to the ties and their rows. The total stays the executor's count."""
    name = _top_field(plan, spec)
    rows = result.rows
    kept = min(1, len(rows))
    top = rows[0].values.get(name) if rows and name is not None else None
    if name is not None and top is not None:
        while kept < len(rows) and rows[kept].values.get(name) == top:
            kept += 1
    total = result.count if result.count is not None else len(rows)
    shown = rows[:kept]
    cited = {e for r in shown for e in r.evidence_ids}
    narrowed = result.model_copy(
        update={
            "rows": shown,
            "truncated": result.truncated or total > kept,
            "evidence": tuple(e for e in result.evidence if e.id in cited),
        }
    )
    return (plan.model_copy(update={"limit": kept}) if kept > 1 else plan), narrowed


def _names(named: Sequence[str], more: bool, zh: bool) -> str:
    if zh:
        return "、".join(named) + ("等" if more else "")
    if more:
        return f"{', '.join(named)} and more"
    return f"{', '.join(named[:-1])} and {named[-1]}" if len(named) > 1 else named[0]


def top_sentence(
    plan: Plan,
    spec: EntitySpec | None,
    rows: Sequence[ResultRow],
    *,
    named: Callable[[ResultRow], str],
    one: str,
    many: str,
    total: int,
    where: str,
    zh: bool,
) -> str | None:
    """The sentence for the top row of a one-row sorted list, or for the rows that
    tie at its top (`named`: a row as the answer names it); None when the plan
    is not one or the rows do not show the value they top."""
    if plan.query_type is not QueryType.LIST or not rows or len(plan.sort) != 1:
        return None
    if plan.limit != 1 and not ties_read(plan, rows):
        return None
    (order,) = plan.sort
    kind = _kind(spec, order.field)
    value: Any = rows[0].values.get(order.field)
    if kind is None or value is None:
        return None
    zh_word, en_word = _WORDS[kind, order.direction]
    field = _noun(spec, order.field, zh)
    # every row read ties: more than these may hold the value
    more = len(rows) >= TIE_ROWS and total > len(rows)
    names = _names([named(r) for r in rows], more, zh)
    shown = plain(value)
    if zh:
        shared = "并列，" if len(rows) > 1 else ""
        return f"共 {total} 个{one}{where}，{field}{zh_word}的是 {names}（{shared}{shown}）。"
    among = f"the {total} {many}" if total != 1 else f"the one {one}"
    if len(rows) > 1:
        return f"{names} share the {en_word} {field} ({shown}) of {among}{where}."
    return f"{names} has the {en_word} {field} ({shown}) of {among}{where}."
