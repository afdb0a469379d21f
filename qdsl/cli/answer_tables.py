"""The answer of `ask` / `run` as tables for people (the text already says it in words).

Keyed by the contract's data keys (docs/python-api.md), so every catalog renders alike.
"""

from __future__ import annotations

from typing import Any

from qdsl.cli.tables import Block, Table

MAX_ROWS = 50


def _records(title: str, items: list[Any]) -> Table:
    keys: list[str] = []
    for item in items[:MAX_ROWS]:
        for k in item if isinstance(item, dict) else ():
            if k not in keys:
                keys.append(k)
    shown = [i for i in items[:MAX_ROWS] if isinstance(i, dict)]
    if "label" in keys and shown and any(
        k != "label" and all(i.get(k) == i.get("label") for i in shown) for k in keys
    ):
        keys.remove("label")  # the label's own column says it already
    table = Table(tuple(keys) or ("value",), title=title)
    for item in items[:MAX_ROWS]:
        if isinstance(item, dict):
            table.add(*(item.get(k) for k in keys))
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


def answer_blocks(answer: Any) -> list[Block]:
    if not isinstance(answer, dict):
        return []
    if isinstance(answer.get("items"), list) and answer["items"]:
        return [_records("items", answer["items"])]
    if isinstance(answer.get("matches"), list) and answer["matches"]:
        return [_records("matches", answer["matches"])]
    if isinstance(answer.get("entity"), dict):
        return [_entity(answer["entity"])]
    if isinstance(answer.get("differences"), list) and answer["differences"]:
        return [_differences(answer)]
    return []
