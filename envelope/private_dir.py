"""Private directories for the state dir and the ref store.

Every directory the store uses ends up a real directory (no symlink), owned
by the user and mode 0700, or the store refuses to use it. Missing parents of
a nested state dir are created 0700 too (`Path.mkdir(parents=True)` would
create them 0755). Messages name the directory by its role, never by its
absolute path (docs/envelopes.md: only `refs path` prints one).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from qdsl.dsl.config import PRIVATE, make_private_dirs
from qdsl.envelope import atomic


class UnsafeDirectory(Exception):
    """A directory the store must not use; the message says which and why."""


def ensure_root(root: Path, *, create: bool) -> bool:
    """The state root, made private; False if it is missing and not created.

    The root itself may be a symlink (a user's choice of where state lives);
    what it points to must be the user's own directory.
    """
    try:
        st = os.stat(root)
    except FileNotFoundError:
        if not create:
            return False
        _make_parents(root)
        st = os.stat(root)
    except NotADirectoryError:
        raise UnsafeDirectory("the state dir is inside a file, not a directory") from None
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory("the state dir is not a directory")
    if atomic.CAPS.posix_modes and st.st_mode & stat.S_ISVTX:
        # /tmp and the like: shared by design, never ours to make 0700
        raise UnsafeDirectory(
            "the state dir is a shared directory (sticky bit); point QDSL_STATE_DIR at "
            "a directory of its own, e.g. a new subdirectory"
        )
    _own_and_private(root, st, "the state dir")
    return True


def ensure_child(path: Path, label: str, *, create: bool) -> bool:
    """A store directory inside the root, made private; never a symlink."""
    if atomic.is_link(path):
        raise UnsafeDirectory(f"{label} is a symbolic link; the ref store refuses to follow it")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return False
        # FileExistsError: made by a concurrent writer, checked below like any other
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, PRIVATE)
        return ensure_child(path, label, create=False)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f"{label} is not a directory")
    _own_and_private(path, st, label)
    return True


def _make_parents(root: Path) -> None:
    make_private_dirs(root, chmod=atomic.CAPS.posix_modes)


def _own_and_private(path: Path, st: os.stat_result, label: str) -> None:
    if not atomic.CAPS.posix_modes:
        return  # Windows: the user profile's ACLs keep it private
    if st.st_uid != os.geteuid():
        raise UnsafeDirectory(
            f"{label} belongs to another user (uid {st.st_uid}); qdsl keeps results only "
            "in a directory of its own user"
        )
    if stat.S_IMODE(st.st_mode) != PRIVATE:
        try:
            os.chmod(path, PRIVATE)
        except OSError as exc:
            raise UnsafeDirectory(
                f"{label} is mode {stat.S_IMODE(st.st_mode):o} and cannot be made 0700 "
                f"({exc.strerror})"
            ) from None
