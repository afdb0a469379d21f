"""The in-process cache of tenants' linkable values: a small LRU with a time to live.

Keyed by (engine URL without password, catalog content key, tenant), so equal
catalogs loaded apart share entries and one database's entries can be dropped
after a refresh (`forget`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from qdsl.dsl.linking import TenantValues

CACHE_SIZE = 128


class TtlLru:
    """A small thread-safe LRU with a time to live per entry."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, ...], tuple[float, TenantValues]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...], now: float, ttl: float) -> TenantValues | None:
        with self._lock:
            item = self._items.get(key)
            if item is None or now - item[0] > ttl:
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: tuple[str, ...], now: float, values: TenantValues) -> None:
        with self._lock:
            self._items[key] = (now, values)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def forget(self, match: Callable[[tuple[str, ...]], bool]) -> None:
        with self._lock:
            for key in [k for k in self._items if match(k)]:
                del self._items[key]

    def __len__(self) -> int:
        return len(self._items)


CACHE = TtlLru(CACHE_SIZE)


def engine_key(engine: Engine) -> str:
    """The engine's URL without its password (rendered once per URL object: a
    value source is made per request, and URLs are immutable)."""
    url = engine.url
    hit = _RENDERED.get(id(url))
    if hit is not None and hit[0] is url:
        return hit[1]
    key = url.render_as_string(hide_password=True)
    # The entry holds the URL (never the engine), so its id is not reused while it lives.
    with _RENDERED_LOCK:
        _RENDERED[id(url)] = (url, key)
        while len(_RENDERED) > CACHE_SIZE:
            _RENDERED.pop(next(iter(_RENDERED)))
    return key


_RENDERED: dict[int, tuple[URL, str]] = {}
_RENDERED_LOCK = threading.Lock()


def forget(engine: Engine, tenant_id: str | None = None) -> None:
    """Drop cached values of this database (of one tenant), e.g. after a refresh."""
    url = engine_key(engine)
    CACHE.forget(lambda k: k[0] == url and (tenant_id is None or k[2] == tenant_id))
