"""The file steps of crash-safe writes and safe reads, one function each.

The ref store calls these through the module (`atomic.replace(...)`), so a
fault-injection test can replace any single step: before the write (open),
during it (write, e.g. ENOSPC), after it (fsync), before the rename, the
index append.

No step takes a lock or needs `fcntl`: the store's guarantees rest on
create-exclusive, rename and unlink, which every platform has. What differs
by platform is named in `CAPS`; a test turns a capability off to run the
portable path on Linux (the behaviour under test stays the real one).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

# a symlink, or on Windows any reparse point (shared with the state dir's checks)
from qdsl.dsl.settings.private_dir import is_link


class Caps(NamedTuple):
    # os.open(..., O_NOFOLLOW): the kernel refuses a symlink in the last component.
    # Without it (Windows) a symlink is refused by lstat before the open.
    nofollow: bool = hasattr(os, "O_NOFOLLOW")
    # POSIX owners and mode bits; on Windows the ACLs of the user profile apply.
    posix_modes: bool = os.name == "posix"
    # os.kill(pid, 0) probes a process on POSIX; on Windows it would terminate it.
    pid_probe: bool = os.name == "posix"
    # A directory can be opened and fsynced (makes a rename durable).
    dir_fsync: bool = os.name == "posix"


CAPS = Caps()

# Windows opens files in text mode unless told otherwise; 0 elsewhere.
_BINARY = getattr(os, "O_BINARY", 0)
_ELOOP = getattr(errno, "ELOOP", 40)


class SymlinkRefused(OSError):
    """A symlink where the store expects its own file or directory."""


def _nofollow(path: Path, flags: int, mode: int = 0o600) -> int:
    if CAPS.nofollow:
        try:
            return os.open(path, flags | _BINARY | os.O_NOFOLLOW, mode)
        except OSError as exc:
            if exc.errno != errno.EEXIST and is_link(path):  # ELOOP (EMLINK on BSD)
                raise SymlinkRefused(_ELOOP, "is a symbolic link") from None
            raise
    if is_link(path):
        raise SymlinkRefused(_ELOOP, "is a symbolic link")
    return os.open(path, flags | _BINARY, mode)


def open_temp(path: Path) -> int:
    """A new private file; fails if anything (a symlink too) is in its place."""
    return _nofollow(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync(fd: int) -> None:
    os.fsync(fd)


def replace(src: Path, dst: Path) -> None:
    """Atomic rename; replaces a symlink at `dst` itself, never its target."""
    os.replace(src, dst)


def unlink(path: Path) -> None:
    """Remove a file (or a symlink itself); on Windows fails while the file is open."""
    os.unlink(path)


def append_line(path: Path, line: bytes) -> None:
    """One write of a whole line at the end of `path` (created 0600)."""
    fd = _nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        write_all(fd, line)
    finally:
        os.close(fd)


def read_file(
    path: Path, limit: int | None = None, *, screen: Callable[[bytes], None] | None = None
) -> bytes:
    """The bytes of a regular file (at most `limit`), refusing a symlink.

    `screen` sees the first chunk (64 KiB) before the rest is read, and may
    raise to stop there: a read that is refused costs no more than a look.
    """
    fd = _nofollow(path, os.O_RDONLY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SymlinkRefused(0, "is not a regular file")
        chunks: list[bytes] = []
        left = limit
        size = 1 << 16
        while left is None or left > 0:
            chunk = os.read(fd, size if left is None else min(left, size))
            if screen is not None and not chunks:
                screen(chunk)
            size = 1 << 20
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename durable; best effort (not every platform can)."""
    if not CAPS.dir_fsync:
        return
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def pid_alive(pid: int) -> bool | None:
    """Whether process `pid` runs; None where that cannot be asked safely."""
    if not CAPS.pid_probe:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
