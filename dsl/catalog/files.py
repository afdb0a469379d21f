"""Catalog files read once while they stay the same.

`AnswerOptions(catalog=path)` and `QDSL_CATALOG` name a catalog by its file,
and every request resolves it. Parsing the TOML each time would cost a
parse, a content key and a new `Catalog` object per request, and every cache
keyed on the catalog (the lexicon, the compiled plans, the value linking)
would start cold. `catalog_at(path)` keeps the catalog of each file and
serves it again while the file is unchanged:

- a file whose status (inode, device, size, modification and change times)
  is the one recorded, and whose times were already `SETTLED_NS` in the past
  when its bytes were read, is unchanged: any write or `utime` after that
  read sets the change time to a later moment;
- otherwise its bytes are read and compared with those the catalog was
  parsed from, so an edit within the clock's granularity, with the size
  kept, is still seen. Equal bytes keep the same catalog object.

A file that cannot be read or parsed is refused as `load_catalog` refuses it,
every time: failures are never kept.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from qdsl.dsl.catalog import Catalog, demo_catalog, load_catalog
from qdsl.dsl.settings.config import getenv
from qdsl.dsl.settings.limits import read_file_bounded

SETTLED_NS = 2_000_000_000
MAX_FILES = 32
_clock = time.time_ns

Status = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class _Entry:
    status: Status
    data: bytes
    catalog: Catalog
    settled: bool  # the file's times were SETTLED_NS old when `data` was read


_ENTRIES: OrderedDict[str, _Entry] = OrderedDict()
_LOCK = threading.Lock()


def _status(path: str) -> tuple[Status, bool] | None:
    """The file's status, and whether its times were settled by now."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    status = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    settled = max(st.st_mtime_ns, st.st_ctime_ns) < _clock() - SETTLED_NS
    return status, settled


def _bytes(path: str) -> bytes | None:
    try:
        return read_file_bounded(path, "catalog_bytes", "catalog")
    except Exception:  # load_catalog says what is wrong with the file
        return None


def catalog_at(path: str | os.PathLike[str]) -> Catalog:
    """The catalog in the file at `path` (`load_catalog`), parsed again only when
    the file changed."""
    key = os.path.abspath(os.fspath(path))
    seen = _status(key)
    with _LOCK:
        hit = _ENTRIES.get(key)
    if seen is not None and hit is not None and hit.status == seen[0] and hit.settled:
        return hit.catalog
    data = _bytes(key)
    if seen is None or data is None:
        return load_catalog(path)
    if hit is not None and hit.data == data:
        catalog = hit.catalog
    else:
        catalog = load_catalog(path)
        if _bytes(key) != data:
            return catalog  # changed while it was parsed: not kept
    _keep(key, _Entry(seen[0], data, catalog, seen[1]))
    return catalog


def _keep(key: str, entry: _Entry) -> None:
    with _LOCK:
        _ENTRIES[key] = entry
        _ENTRIES.move_to_end(key)
        while len(_ENTRIES) > MAX_FILES:
            _ENTRIES.popitem(last=False)


def resolve_catalog_cached(path: str | os.PathLike[str] | None = None) -> Catalog:
    """`resolve_catalog` (`path` over `QDSL_CATALOG` over the demo catalog), with
    catalog files read through `catalog_at`."""
    chosen = path or getenv("QDSL_CATALOG")
    return catalog_at(chosen) if chosen else demo_catalog()
