"""The answer to "who has the highest salary": the object and the value it tops.

A list plan sorted on one field and cut to one row asks for the top (or bottom)
object; answering it as "9 employees found, showing 1" names the object but not
what makes it the answer. The value comes from the row when the plan projected
the sort field (the rule planner does); without it, or when the top row holds no
value, the caller keeps the plain list sentence.
"""

from __future__ import annotations

from typing import Any

from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.dsl.ir import Plan, QueryType, SortDirection
from qdsl.executor.result import ResultRow
from qdsl.phrases import field_name, field_spec, plain

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


def top_sentence(
    plan: Plan,
    spec: EntitySpec | None,
    row: ResultRow,
    *,
    named: str,
    one: str,
    many: str,
    total: int,
    where: str,
    zh: bool,
) -> str | None:
    """The sentence for the top row of a one-row sorted list, or None when the plan
    is not one or the row does not show the value it tops."""
    if plan.query_type is not QueryType.LIST or plan.limit != 1 or len(plan.sort) != 1:
        return None
    (order,) = plan.sort
    kind = _kind(spec, order.field)
    value: Any = row.values.get(order.field)
    if kind is None or value is None:
        return None
    zh_word, en_word = _WORDS[kind, order.direction]
    field = _noun(spec, order.field, zh)
    if zh:
        return f"共 {total} 个{one}{where}，{field}{zh_word}的是 {named}（{plain(value)}）。"
    among = f"the {total} {many}" if total != 1 else f"the one {one}"
    return f"{named} has the {en_word} {field} ({plain(value)}) of {among}{where}."
