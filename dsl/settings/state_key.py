"""Secret keys kept in the private state dir (result MACs, the grammar cache's seal).

A key is 32 random bytes in a file created 0600 with O_EXCL (linked into
place whole, so a concurrent first use reads a complete key) and opened with
O_NOFOLLOW; a key file that is a symlink, not a regular file, not the user's,
or readable by others is refused (`UnsafeKey`), never used.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

KEY_BYTES = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeKey(Exception):
    """A key file that must not be used; the message says why."""


def read_key(path: Path) -> bytes | None:
    """The key at `path`; None if there is none. Raises UnsafeKey."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UnsafeKey(exc.strerror or "cannot open it") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeKey("not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise UnsafeKey("owned by another user")
        if info.st_mode & 0o077:
            raise UnsafeKey("readable or writable by others")
        key = handle.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise UnsafeKey("wrong length")
    return key


def create_key(path: Path) -> None:
    """A new key at `path`, unless another process made one first."""
    import secrets  # only when a key is made: `secrets` loads `random`

    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process's key came first
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def key_at(path: Path) -> bytes:
    """The key at `path`, created on first use. Raises UnsafeKey or OSError."""
    key = read_key(path)
    if key is None:
        create_key(path)
        key = read_key(path)
    if key is None:
        raise UnsafeKey("vanished while created")
    return key
