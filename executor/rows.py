"""A statement's rows as the flow reads them: the tuples SQLAlchemy returned
and where each result column is in them.

Rows arrive processed (SQLAlchemy's result processing applied every column's
type), so a column is read by its index alone. One `Layout` is kept per
statement's column keys, so what the flow works out per layout (`memo`) is
worked out once, not once per call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple


class Layout:
    """Where each result column of a statement is."""

    __slots__ = ("index", "keys", "memo")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.index = {k: i for i, k in enumerate(keys)}
        # what readers of these rows work out once per layout (`executor.flow`)
        self.memo: dict[str, object] = {}

    def getter(self, key: str) -> Callable[[Sequence[Any]], Any]:
        """Reads column `key` of a row."""
        return itemgetter(self.index[key])


class Rows(NamedTuple):
    """A statement's rows and where to read what in them."""

    layout: Layout
    data: Sequence[Sequence[Any]]


_LAYOUTS: dict[tuple[str, ...], Layout] = {}
_LAYOUTS_MAX = 1024
_LOCK = threading.Lock()


def layout_of(keys: tuple[str, ...]) -> Layout:
    """The one layout of these column keys (bounded: forgotten in bulk when full)."""
    found = _LAYOUTS.get(keys)
    if found is None:
        with _LOCK:
            found = _LAYOUTS.get(keys)
            if found is None:
                if len(_LAYOUTS) >= _LAYOUTS_MAX:
                    _LAYOUTS.clear()
                found = _LAYOUTS[keys] = Layout(keys)
    return found
