"""The answer of `ask` / `run` as tables for people (the text already says it in words).

Keyed by the contract's data keys (docs/python-api.md), so every catalog renders alike.
"""

from __future__ import annotations

from typing import Any

from qdsl.cli.tables import Block, Table

MAX_ROWS = 50


# Operators under which every row of a verified answer holds the condition's own
# value (a canonical enum value for equals_or_alias): that value may be shown for
# a row whose data does not carry the field. A range or `in` says less per row.
_STATED = frozenset({"equals", "equals_or_alias"})


def filtered_fields(plan: Any) -> list[tuple[str, Any]]:
    """The plan's conditions as (field, value shown per row): the row's own value
    when its data holds the field, else the condition's (`_MISSING` when unknown)."""
    out: list[tuple[str, Any]] = []
    filters = plan.get("filters") if isinstance(plan, dict) else None
    for f in filters if isinstance(filters, list) else ():
        if not isinstance(f, dict) or not isinstance(f.get("field"), str):
            continue
        value = f.get("value")
        stated = f.get("operator") in _STATED and not isinstance(value, list | dict)
        if f["field"] not in (name for name, _ in out):
            out.append((f["field"], value if stated else _MISSING))
    return out


_MISSING = object()


def _beside_label(keys: list[str], named: str, filtered: list[tuple[str, Any]]) -> dict[str, Any]:
    """Move the fields the question filtered on right after the label column, what
    makes each row an answer ("remote employees in Berlin": label, city, remote);
    the values to show for those the rows do not carry."""
    stated: dict[str, Any] = {}
    beside: list[str] = []
    for name, value in filtered:
        if name in ("id", "label", named):
            continue
        if name in keys:
            keys.remove(name)
        elif value is _MISSING:
            continue
        else:
            stated[name] = value
        beside.append(name)
    at = keys.index(named) + 1 if named in keys else len(keys)
    keys[at:at] = beside
    return stated


def _records(title: str, items: list[Any], filtered: list[tuple[str, Any]]) -> Table:
    keys: list[str] = []
    for item in items[:MAX_ROWS]:
        for k in item if isinstance(item, dict) else ():
            if k not in keys:
                keys.append(k)
    shown = [i for i in items[:MAX_ROWS] if isinstance(i, dict)]
    named = "label"
    for k in keys:
        if k != "label" and shown and all(i.get(k) == i.get("label") for i in shown):
            named = k
            break
    if named != "label" and "label" in keys:
        keys.remove("label")  # the label's own column says it already
    stated = _beside_label(keys, named, filtered) if shown else {}
    table = Table(tuple(keys) or ("value",), title=title)
    for item in items[:MAX_ROWS]:
        if isinstance(item, dict):
            table.add(*(item[k] if k in item else stated.get(k) for k in keys))
        else:
            table.add(item)
    if len(items) > MAX_ROWS:
        table.add(f"… {len(items) - MAX_ROWS} more", *([""] * (len(table.columns) - 1)))
    return table


def _entity(entity: dict[str, Any]) -> Table:
    table = Table(("field", "value"))
    for key, value in entity.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                table.add(sub, v)
        else:
            table.add(key, value)
    return table


def _differences(answer: dict[str, Any]) -> Table:
    ids = [str(s.get("id")) for s in answer.get("subjects") or [] if isinstance(s, dict)]
    table = Table(("field", *ids))
    for d in answer.get("differences") or []:
        values = d.get("values") or {}
        table.add(d.get("field"), *(values.get(i) for i in ids))
    return table


def answer_blocks(answer: Any, plan: Any = None) -> list[Block]:
    """The answer's tables; `plan` (the envelope's `data.plan`) names the fields a
    list's rows are shown with beside their label."""
    if not isinstance(answer, dict):
        return []
    filtered = filtered_fields(plan)
    if isinstance(answer.get("items"), list) and answer["items"]:
        return [_records("items", answer["items"], filtered)]
    if isinstance(answer.get("matches"), list) and answer["matches"]:
        return [_records("matches", answer["matches"], filtered)]
    if isinstance(answer.get("entity"), dict):
        return [_entity(answer["entity"])]
    if isinstance(answer.get("differences"), list) and answer["differences"]:
        return [_differences(answer)]
    return []
