"""The file steps of crash-safe writes, one function each.

The ref store calls these through the module (`atomic.replace(...)`), so a
fault-injection test can replace any single step: before the write (open),
during it (write, e.g. ENOSPC), after it (fsync), before the rename.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def open_temp(path: Path) -> int:
    """A new private file; fails if it exists."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync(fd: int) -> None:
    os.fsync(fd)


def replace(src: Path, dst: Path) -> None:
    os.replace(src, dst)


def fsync_dir(path: Path) -> None:
    """Make a rename durable; best effort (not every platform can)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """An inter-process lock on `path` (flock; released when the fd closes)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: single-process use only
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
