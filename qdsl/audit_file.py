"""The audit log's files: `FileSink` (QDSL_AUDIT_LOG=<path>) and the state dir's
rotating `audit/audit.jsonl` (`RotatingFileSink`).

Each line is one `write(2)` with O_APPEND, so processes do not interleave
lines. A line is whole or absent: a write the disk cuts short (a full disk
takes what fits) is completed, or, when the rest cannot be written either,
the part written is cut off again (`ftruncate` back to where the line began,
unless another writer has appended since: then the file is left as it is
rather than lose that writer's line) and the fault is raised. Every file is
created 0600 whatever the umask (an older, wider one is made 0600).

Under the state dir nothing is followed: the file, its rotated copies and the
rotation lock are opened with O_NOFOLLOW, and `<state>/audit/` must be a real
directory of the user inside a state dir of the user (`qdsl.dsl.settings.private_dir`),
checked whenever the file is (re)opened. A fault raises OSError or the state
dir's typed error; `qdsl.audit.Audit` reports either as `usage/audit_unwritable`.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

ROTATE_BYTES = 10 * 1024 * 1024
ROTATE_KEEP = 5
# How often an open audit file's path is looked up again (RotatingFileSink).
RECHECK_S = 1.0

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_POSIX = os.name == "posix"
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW


def open_private(path: Path, flags: int = _APPEND) -> int:
    """`path` opened without following a symlink, a regular file of the user, 0600."""
    fd = os.open(path, flags, 0o600)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(0, "not a regular file")
        if _POSIX and info.st_uid != os.geteuid():
            raise PermissionError(0, "the file belongs to another user")
        if _POSIX and stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # made by an older qdsl, or under another umask
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_line(fd: int, data: bytes) -> None:
    """`data` appended whole, or nothing of it left behind (see the module doc)."""
    written = os.write(fd, data)
    if written == len(data):
        return
    end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: just past what was written
    try:
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, end - written)
        raise


class FileSink:
    """Appends to a file (created 0600), opened per line."""

    stages = False

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def write(self, line: str) -> None:
        # The path is the operator's choice (QDSL_AUDIT_LOG), outside the state dir:
        # a symlink, a device or a shared log file there is theirs to give.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            write_line(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)


class RotatingFileSink:
    """Appends to a file (0600) and renames it to `.1` (… `.keep`) past `max_bytes`.

    The file stays open between writes (a server writes many); each write is
    one `write(2)` of one line with O_APPEND, so processes do not interleave
    lines. Rotation happens under an exclusive lock on `<file>.lock` after
    re-checking the size, so two writers past the limit rotate once.

    Following another process's rotation: each line costs an `fstat(2)` of
    the open file (its size, and whether it was deleted: then it is reopened
    before the line is written). A file another process rotated is over
    `max_bytes`, so the next line here (which lands in it) takes the rotation
    lock, finds the path small and reopens it. For a rename by anything else,
    the path is looked up again (`lstat(2)`) at most every `recheck_s`; until
    then lines land in the renamed file: kept, in order, never lost. (A
    `stat` of the path per line was a third of a line's cost.)

    `prepare` runs before the file is (re)opened and at each look at the path,
    and returns the directory to open it in (the state dir's checked `audit/`,
    so a directory that stopped being the user's is refused within `recheck_s`);
    without it, `path`'s own.
    """

    stages = False

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_bytes: int = ROTATE_BYTES,
        keep: int = ROTATE_KEEP,
        recheck_s: float = RECHECK_S,
        *,
        prepare: Callable[[], Path] | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_bytes, self.keep = max_bytes, keep
        self.recheck_s = recheck_s
        self.prepare = prepare
        self._fd: int | None = None
        self._ino = -1
        self._checked = 0.0  # time.monotonic() of the last look at the path

    def _open(self) -> tuple[int, int]:
        """The open file and its size; reopened when it was deleted, or (looked
        up at most every `recheck_s`) when the path now names another file."""
        fd = self._fd
        if fd is not None:
            try:
                st = os.fstat(fd)
                if st.st_nlink:
                    now = time.monotonic()
                    if now - self._checked < self.recheck_s:
                        return fd, st.st_size
                    self._checked = now
                    if self.prepare is not None:
                        self.prepare()  # the directory is still the user's own
                    if os.lstat(self.path).st_ino == self._ino:
                        return fd, st.st_size
            except FileNotFoundError:
                pass
            os.close(fd)
            self._fd = None
        if self.prepare is not None:
            self.path = self.prepare() / self.path.name
        fd = open_private(self.path)
        self._fd = fd
        st = os.fstat(fd)
        self._ino = st.st_ino
        self._checked = time.monotonic()
        return fd, st.st_size

    def write(self, line: str) -> None:
        fd, size = self._open()
        data = (line + "\n").encode("utf-8")
        write_line(fd, data)
        if size + len(data) > self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        import fcntl

        lock = open_private(Path(f"{self.path}.lock"), os.O_RDWR | os.O_CREAT | _NOFOLLOW)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                size = os.lstat(self.path).st_size
            except FileNotFoundError:
                return  # another process rotated it meanwhile
            if size <= self.max_bytes:
                return
            for n in range(self.keep - 1, 0, -1):
                older = Path(f"{self.path}.{n}")
                if os.path.lexists(older):
                    older.replace(f"{self.path}.{n + 1}")  # renames a link itself, never its target
            self.path.replace(f"{self.path}.1")
        finally:
            os.close(lock)  # releases the flock
            # whoever rotated, the next line goes to the file the path names now
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()
