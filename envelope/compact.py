"""Compacted previews of large results (docs/envelopes.md).

A preview has the result's shape: an object stays an object with its keys
(up to a cap), a list stays a list of its first items, a string stays a
string, scalars stay. What was cut is said beside the data, never inside it:
each cut list or object is one entry of `cuts`, a JMESPath into the stored
envelope with how many items (or keys) it holds and how many are shown, so a
reader can fetch the rest with `refs get`:

  a long string        -> its head plus "…[+N chars]"
  a long list          -> its first items;      cut {"path", "total", "shown"}
  an object over cap   -> its first keys;       cut {"path", "total", "shown"}
  too deep             -> the same type, empty; cut {"path", "total", "shown": 0}
                          (an object at the depth limit keeps its keys, with
                          its containers emptied, so names survive)

Paths given as `whole` (the rendered answer, `data.text`) are not shortened;
the budget tries every level with them whole before it cuts them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Limits:
    items: int
    string: int
    depth: int
    keys: int


# Tried in order until the printed preview fits the budget.
LEVELS: tuple[Limits, ...] = (
    Limits(items=50, string=2000, depth=12, keys=100),
    Limits(items=20, string=400, depth=10, keys=60),
    Limits(items=10, string=200, depth=8, keys=40),
    Limits(items=5, string=100, depth=6, keys=20),
    Limits(items=3, string=60, depth=4, keys=12),
    Limits(items=1, string=32, depth=3, keys=6),
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} chars]"


def jmes_child(path: str, key: str) -> str:
    name = key if _IDENT.match(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{name}" if path else name


@dataclass
class Compactor:
    lim: Limits
    whole: Collection[str] = ()
    cuts: list[dict[str, Any]] = field(default_factory=list)

    def cut(self, path: str, total: int, shown: int) -> None:
        self.cuts.append({"path": path or "@", "total": total, "shown": shown})

    def walk(self, value: Any, path: str, depth: int) -> Any:
        if isinstance(value, str):
            return value if path in self.whole else shorten(value, self.lim.string)
        if isinstance(value, list):
            return self._list(value, path, depth)
        if isinstance(value, dict):
            return self._dict(value, path, depth)
        return value

    def _list(self, value: list[Any], path: str, depth: int) -> list[Any]:
        if depth >= self.lim.depth:
            if value:
                self.cut(path, len(value), 0)
            return []
        head = value[: self.lim.items]
        if len(value) > len(head):
            self.cut(path, len(value), len(head))
        return [self.walk(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(head)]

    def _dict(self, value: dict[Any, Any], path: str, depth: int) -> dict[str, Any]:
        keys = list(value)[: self.lim.keys]
        if len(value) > len(keys) and any(w.rpartition(".")[0] == path for w in self.whole):
            keys += [k for k in list(value)[len(keys) :] if jmes_child(path, str(k)) in self.whole]
        if len(value) > len(keys):
            self.cut(path, len(value), len(keys))
        out: dict[str, Any] = {}
        for key in keys:
            child = jmes_child(path, str(key))
            name = shorten(str(key), self.lim.string)
            if depth + 1 >= self.lim.depth:
                out[name] = self._stub(value[key], child)
            else:
                out[name] = self.walk(value[key], child, depth + 1)
        return out

    def _stub(self, value: Any, path: str) -> Any:
        """A value at the depth limit: same type, containers emptied."""
        if isinstance(value, list | dict):
            if value:
                self.cut(path, len(value), 0)
            return type(value)()
        return self.walk(value, path, self.lim.depth)


def compact(value: Any, lim: Limits, *, path: str = "", whole: Collection[str] = ()) -> Any:
    """`value` within `lim`; the cuts are dropped (see `compact_with_cuts`)."""
    return Compactor(lim, whole).walk(value, path, 0)


def compact_with_cuts(
    value: Any, lim: Limits, *, path: str = "", whole: Collection[str] = ()
) -> tuple[Any, list[dict[str, Any]]]:
    compactor = Compactor(lim, whole)
    return compactor.walk(value, path, 0), compactor.cuts
