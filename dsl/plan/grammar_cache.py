"""Lark's parse tables kept between processes, loaded only when qdsl wrote them.

Building the plan grammar's LALR tables costs 20–35 ms per parser, a tenth of
a `qdsl --json parse` process (docs/architecture.md). Lark keeps them in a
file (`cache=`), but that file is a pickle, and loading a pickle runs whatever
code it names. So Lark is handed a cache file only when

* the state dir is the user's own, and `cache/` a real directory of the user,
  mode 0700 (`qdsl.dsl.settings.private_dir`), and
* the file is a regular file of the user (not a symlink), readable by no one
  else, whose last line is an HMAC-SHA256 of its path and the rest, keyed by
  `cache/seal.key` (`qdsl.dsl.settings.state_key`): a file planted or swapped by anyone,
  the dir's owner included, copied from elsewhere, or torn carries no valid seal.

A file is named for what Lark builds it from (the grammar, the parser's
options, Lark's and Python's versions), and the seal covers its path, which
Lark's own check covers too: a sealed file is always one Lark loads as it is
and never rewrites. Any other is rebuilt under an exclusive lock
(`cache/.lock`): the old file is removed, Lark builds the tables and writes the
file, which is then made 0600 (Lark creates it under the umask, inside the
0700 directory) and sealed (the HMAC line appended: Lark reads its header and
two pickles and ignores what follows). A reader that finds a file being
written sees no seal, takes the lock and so waits for the writer. Without a
usable state dir, or without `fcntl`, the tables are built per process and
nothing is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from qdsl.dsl.settings.config import state_root
from qdsl.dsl.settings.private_dir import POSIX, UnsafeDirectory, ensure_child, ensure_root
from qdsl.dsl.settings.state_key import UnsafeKey, key_at

CACHE_DIR = "cache"
KEY_FILE = "seal.key"
LOCK_FILE = ".lock"
SEAL = b"\nqdsl-seal hmac-sha256:"
# Far above the plan grammar's tables (about 32 KB): a bigger file is not ours.
MAX_BYTES = 4 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class Slot(NamedTuple):
    """What Lark's `cache=` gets for one parser, and what to do after it."""

    lark: str | bool  # a sealed file to load, a file to build, or False: no cache
    key: bytes = b""
    lock: int = -1  # held while the file is built; -1 when it is only loaded


def cache_file(kind: str, inputs: str) -> Path:
    """The cache file of parser `kind` built from `inputs` (grammar and options)."""
    from lark import __version__ as lark_version

    digest = hashlib.sha256(
        f"{inputs}\n{lark_version}\n{sys.version_info[:2]}".encode()
    ).hexdigest()[:16]
    return state_root() / CACHE_DIR / f"plan-grammar-{kind}-{digest}.lark"


def open_slot(kind: str, inputs: str) -> Slot:
    """The sealed cache of parser `kind`; else the file to build it in, with the
    lock held; else (no private state dir) no cache."""
    final = cache_file(kind, inputs)
    folder = final.parent
    try:
        ensure_root(folder.parent, create=True)
        ensure_child(folder, "the cache directory", create=True)
        key = key_at(folder / KEY_FILE)
    except (UnsafeDirectory, UnsafeKey, OSError):
        return Slot(False)
    if _sealed(final, key):
        return Slot(str(final))
    try:
        import fcntl
    except ImportError:
        return Slot(False)
    try:
        lock = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
    except OSError:
        return Slot(False)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _sealed(final, key):  # built by the process we waited for
            _release(lock)
            return Slot(str(final))
        for stale in folder.glob(f"plan-grammar-{kind}-*.lark"):
            os.unlink(stale)  # also `final`: whatever it was, Lark makes a new file
    except OSError:
        _release(lock)
        return Slot(False)
    return Slot(str(final), key, lock)


def _release(lock: int) -> None:
    os.close(lock)  # closing the descriptor releases the flock


def _message(path: Path, body: bytes) -> bytes:
    return b"qdsl grammar cache v1\n" + os.fsencode(path) + b"\n" + body


def _seal(key: bytes, path: Path, body: bytes) -> bytes:
    return hmac.new(key, _message(path, body), hashlib.sha256).hexdigest().encode("ascii")


def _open_own(path: Path, flags: int) -> tuple[int, os.stat_result] | None:
    """`path` opened without following a symlink, if it is a regular file of the
    user of a plausible size; else None."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _BINARY)
    except OSError:
        return None  # missing, a symlink (ELOOP), unreadable
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_size > MAX_BYTES
        or (POSIX and info.st_uid != os.geteuid())
    ):
        os.close(fd)
        return None
    return fd, info


def _sealed(path: Path, key: bytes) -> bool:
    opened = _open_own(path, os.O_RDONLY)
    if opened is None:
        return False
    fd, info = opened
    try:
        if POSIX and info.st_mode & 0o077:
            return False
        data = _read_all(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    body, found, mac = data.rpartition(SEAL)
    if not found or not mac.endswith(b"\n"):
        return False
    return hmac.compare_digest(mac[:-1], _seal(key, path, body))


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _seal_file(path: Path, key: bytes) -> None:
    """The file Lark just wrote, made 0600 and sealed; removed if that fails."""
    opened = _open_own(path, os.O_RDWR)
    if opened is None:
        return  # Lark could not write it (it says nothing): no cache this time
    fd, _info = opened
    try:
        if POSIX:
            os.fchmod(fd, 0o600)
        line = SEAL + _seal(key, path, _read_all(fd)) + b"\n"
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        # a full disk, say: a partly written seal never verifies; the next process
        # builds the tables again
        with contextlib.suppress(OSError):
            os.unlink(path)
    finally:
        os.close(fd)


@contextlib.contextmanager
def grammar_cache(kind: str, inputs: str) -> Iterator[str | bool]:
    """Lark's `cache=` for parser `kind` built from `inputs` (its grammar and
    options), around the `Lark(...)` call that uses it."""
    slot = open_slot(kind, inputs)
    if slot.lock < 0:
        yield slot.lark
        return
    path = Path(str(slot.lark))
    try:
        yield slot.lark
        _seal_file(path, slot.key)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    finally:
        _release(slot.lock)
