"""Scanning the ref store: the ref files are the truth, the index a cache.

A scan lists the day directories. A ref file with an index line is known by
that line (no read); one without is known by its header (a lost line loses
nothing); an index line without a file is stale. Temp files, files that are
not refs and ref files whose header does not read are reported for the
collector. Nothing here writes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qdsl.envelope import atomic
from qdsl.envelope.collect import INDEX, TMP_SUFFIX
from qdsl.envelope.records import (
    MAX_HEADER_BYTES,
    REF_ID,
    RefRecord,
    day_of,
    decode_header,
    is_ref_id,
)


class Scan:
    """What the store holds: the ref files found, known by index or header.

    (A plain class: `dataclasses` would be the heaviest import of every
    command's start-up, which collects the store.)"""

    def __init__(self, *, stale_lines: int, index_usable: bool) -> None:
        self.records: list[RefRecord] = []  # oldest first
        self.stale_lines = stale_lines  # index lines without a file, duplicates, unparseable
        self.unindexed = 0  # ref files without an index line
        self.index_usable = index_usable
        self.temps: list[Path] = []
        self.junk: list[Path] = []  # not a ref, not a temp
        self.unreadable: list[Path] = []  # ref name, no valid header
        self.day_dirs: list[Path] = []
        self.warnings: list[str] = []

    @property
    def index_stale(self) -> bool:
        return bool(self.stale_lines or self.unindexed or not self.index_usable)


def scan_store(refs_dir: Path) -> Scan:
    """What the store holds: its ref files, known by index line or header."""
    indexed, stale, usable = _read_index(refs_dir / INDEX)
    scan = Scan(stale_lines=stale, index_usable=usable)
    found: dict[str, RefRecord] = {}
    for day_dir, entry in _entries(refs_dir, scan):
        name = entry.name
        ref_id = name[:-5] if name.endswith(".json") else ""
        rec = indexed.pop(ref_id, None) if ref_id else None
        if (
            rec is not None
            and day_of(ref_id) == day_dir.name
            and entry.is_file(follow_symlinks=False)
        ):
            found[ref_id] = rec  # the common case: a file its index line describes
            continue
        path = day_dir / name
        if name.endswith(TMP_SUFFIX):
            scan.temps.append(path)
        elif (
            not is_ref_id(ref_id)
            or day_of(ref_id) != day_dir.name
            or not entry.is_file(follow_symlinks=False)
        ):
            scan.junk.append(path)
        elif (rec := _header_record(path)) is None or rec.ref_id != ref_id:
            scan.unreadable.append(path)
        else:
            scan.unindexed += 1
            found[ref_id] = rec
    with contextlib.suppress(OSError):
        scan.temps += [refs_dir / e.name for e in os.scandir(refs_dir) if _is_temp(e.name)]
    scan.stale_lines += len(indexed)  # lines whose file is gone
    scan.records = sorted(found.values(), key=lambda r: (r.created_ms, r.ref_id))
    return scan


def _read_index(index: Path) -> tuple[dict[str, RefRecord], int, bool]:
    try:
        raw = atomic.read_file(index)
    except (FileNotFoundError, NotADirectoryError):
        return {}, 0, True
    except OSError:  # a symlink or unreadable: rebuilt from the ref files
        return {}, 0, False
    lines = [line for line in raw.splitlines() if line.strip()]
    try:  # one parse for the whole index; line by line only when a line is bad
        docs: list[Any] = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        docs = []
        for line in lines:
            with contextlib.suppress(ValueError, RecursionError):
                docs.append(json.loads(line))
    found: dict[str, RefRecord] = {}
    for doc in docs:
        try:
            rec = RefRecord.from_json(doc)
        except (ValueError, KeyError, TypeError, OverflowError, AttributeError):
            continue
        if REF_ID.match(rec.ref_id):  # and it counts only with its file (scan)
            found[rec.ref_id] = rec
    return found, len(lines) - len(found), True


def _entries(refs_dir: Path, scan: Scan) -> Iterator[tuple[Path, os.DirEntry[str]]]:
    try:
        tops = list(os.scandir(refs_dir))
    except OSError:
        return
    for top in tops:
        if top.is_symlink():
            scan.warnings.append(f"refs/{top.name} is a symbolic link; not followed")
        elif top.is_dir(follow_symlinks=False):
            day_dir = Path(top.path)
            scan.day_dirs.append(day_dir)
            with contextlib.suppress(OSError):
                for entry in os.scandir(day_dir):
                    yield day_dir, entry


def _is_temp(name: str) -> bool:
    return name.endswith(TMP_SUFFIX)


def _header_record(path: Path) -> RefRecord | None:
    try:
        head = atomic.read_file(path, limit=MAX_HEADER_BYTES)
        return decode_header(head)[0]
    except (OSError, ValueError):
        return None
