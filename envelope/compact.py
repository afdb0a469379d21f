"""Compacted previews of large results (docs/envelopes.md).

A preview keeps the result's shape: every key of an object stays (up to a
cap), scalars stay, and only what is too big changes, always into an object
whose keys start with `$` so a reader can tell a preview marker from data:

  a long string      -> its head plus "…[+N chars]"
  a cut list         -> {"$count": N, "$shown": k, "$head": [...]}
  a list of records  -> {"$count": N, "$shown": k, "$columns": [...], "$rows": [[...]]}
  an object over cap -> its first keys plus "$moreKeys": N
  too deep           -> {"$count": N} (list) or {"$keys": N} (object)

Hooks, looked up by answer contract or operation, first turn a known result
into a smaller view (an entity list into an index of ids and labels, the
catalog into its field index); the generic compaction then applies to that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    items: int
    string: int
    depth: int
    keys: int


# Tried in order until the printed preview fits the budget.
LEVELS: tuple[Limits, ...] = (
    Limits(items=20, string=400, depth=10, keys=60),
    Limits(items=10, string=200, depth=8, keys=40),
    Limits(items=5, string=100, depth=6, keys=20),
    Limits(items=3, string=60, depth=4, keys=12),
    Limits(items=1, string=32, depth=3, keys=6),
)

Hook = Callable[[Any, Limits], Any]


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} chars]"


def compact(value: Any, lim: Limits, depth: int = 0) -> Any:
    if isinstance(value, str):
        return shorten(value, lim.string)
    if isinstance(value, list):
        return _compact_list(value, lim, depth)
    if isinstance(value, dict):
        return _compact_dict(value, lim, depth)
    return value


def _compact_list(value: list[Any], lim: Limits, depth: int) -> Any:
    if not value:
        return value
    if depth >= lim.depth:
        return {"$count": len(value)}
    head = value[: lim.items]
    if len(head) >= 2 and all(isinstance(v, dict) for v in head):
        columns: list[str] = []
        for row in head:
            columns.extend(k for k in row if k not in columns)
        columns = columns[: lim.keys]
        return {
            "$count": len(value),
            "$shown": len(head),
            "$columns": columns,
            "$rows": [[compact(row.get(c), lim, depth + 2) for c in columns] for row in head],
        }
    items = [compact(v, lim, depth + 1) for v in head]
    if len(value) <= lim.items:
        return items
    return {"$count": len(value), "$shown": len(items), "$head": items}


def _compact_dict(value: dict[str, Any], lim: Limits, depth: int) -> Any:
    if not value:
        return value
    if "$index" in value:
        return value  # a hook's view, already sized
    if depth >= lim.depth:
        return {"$keys": len(value)}
    out: dict[str, Any] = {}
    for i, (k, v) in enumerate(value.items()):
        if i >= lim.keys:
            out["$moreKeys"] = len(value) - lim.keys
            break
        out[shorten(str(k), lim.string)] = compact(v, lim, depth + 1)
    return out


# ------------------------------------------------------------------ hooks
def _label_of(item: Any) -> Any:
    if not isinstance(item, dict):
        return None
    for key in ("label", "title", "name"):
        if key in item:
            return item[key]
    return next((v for k, v in item.items() if k != "id" and isinstance(v, str)), None)


def entity_index(items: list[Any], lim: Limits) -> dict[str, Any]:
    """An entity list as an index of ids and labels."""
    cap = lim.items * 10
    head = items[:cap]
    label_len = max(lim.string // 4, 16)
    return {
        "$count": len(items),
        "$shown": len(head),
        "$index": "ids and labels; the full items are in the ref",
        "ids": [it.get("id") if isinstance(it, dict) else it for it in head],
        "labels": [
            shorten(lab, label_len) if isinstance(lab := _label_of(it), str) else lab for it in head
        ],
    }


def entity_list_hook(data: Any, lim: Limits) -> Any:
    if not isinstance(data, dict):
        return data
    answer = data.get("answer")
    if isinstance(answer, dict) and isinstance(answer.get("items"), list):
        return {**data, "answer": {**answer, "items": entity_index(answer["items"], lim)}}
    if isinstance(data.get("items"), list):
        return {**data, "items": entity_index(data["items"], lim)}
    return data


def catalog_hook(data: Any, lim: Limits) -> Any:
    """The catalog as its field index: entity -> query types and field names.

    Names are joined into strings so that the index survives the depth limit
    of the tighter levels (strings are only shortened, never summarized).
    """
    if not isinstance(data, dict) or not isinstance(data.get("entities"), dict):
        return data
    index: dict[str, Any] = {}
    for name, spec in data["entities"].items():
        if not isinstance(spec, dict):
            index[name] = spec
            continue
        fields = spec.get("fields")
        names = sorted(fields) if isinstance(fields, dict) else fields
        index[name] = {
            "query_types": ", ".join(map(str, spec.get("query_types") or [])),
            "fields": ", ".join(map(str, names or [])),
        }
    return {**{k: v for k, v in data.items() if k != "entities"}, "entities": index}


# contract or operation name -> hook; callers may add their own.
HOOKS: dict[str, Hook] = {
    "entity_list": entity_list_hook,
    "catalog": catalog_hook,
}


def register_hook(name: str, hook: Hook) -> None:
    HOOKS[name] = hook


def compact_data(operation: str, data: Any, lim: Limits) -> Any:
    contract = data.get("answer_contract") if isinstance(data, dict) else None
    hook = HOOKS.get(contract) if isinstance(contract, str) else None
    hook = hook or HOOKS.get(operation)
    if hook is not None:
        data = hook(data, lim)
    return compact(data, lim)
