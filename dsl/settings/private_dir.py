"""The state dir and its directories: the user's own, mode 0700, no symlinks.

Everything qdsl keeps in its state dir (the ref store, the audit log, the
grammar cache, the demo database, keys) is trusted only because no one else
can write there. So before anything is read from it or written to it, the
state dir is checked to be a directory of the current user (not a shared,
sticky one such as /tmp), and each directory inside it a real directory (not
a symlink) of the user; a directory of the user with other bits set is made
0700. Missing ones are created 0700, parents of a nested state dir too
(`Path.mkdir(parents=True)` would create them 0755). Messages name a directory
by its role, never by its absolute path (docs/envelopes.md: only `refs path`
prints one).

`private_root()` / `private_child()` raise a typed error (`usage/state_dir_unsafe`,
or `usage/state_dir_unusable` when the file system refuses) that says what to do;
`ensure_root()` / `ensure_child()` raise `UnsafeDirectory` for callers that
degrade instead (the ref store's collection, the grammar cache).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.config import PRIVATE, make_private_dirs, state_root

POSIX = os.name == "posix"

UNSAFE_HINT = (
    "point QDSL_STATE_DIR at a directory of your own (qdsl creates a missing one "
    "mode 0700), or fix this one: owned by you, no symlinks inside it"
)


class UnsafeDirectory(Exception):
    """A directory qdsl must not use; the message says which and why.

    `unusable`: not a directory at all (nothing another user did), rather
    than one that is not safe to use."""

    def __init__(self, message: str, *, unusable: bool = False) -> None:
        super().__init__(message)
        self.unusable = unusable


def is_link(path: Path) -> bool:
    """A symlink (or, on Windows, any reparse point such as a junction)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_reparse_tag", 0))


def ensure_root(root: Path, *, create: bool, posix: bool = POSIX) -> bool:
    """The state root, made private; False if it is missing and not created.

    The root itself may be a symlink (a user's choice of where state lives);
    what it points to must be the user's own directory. `posix`: whether owners
    and mode bits apply (on Windows the ACLs of the user profile do).
    """
    try:
        st = os.stat(root)
    except FileNotFoundError:
        if not create:
            return False
        make_private_dirs(root, chmod=posix)
        st = os.stat(root)
    except NotADirectoryError:
        raise UnsafeDirectory(
            "the state dir is inside a file, not a directory", unusable=True
        ) from None
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory("the state dir is not a directory", unusable=True)
    if posix and st.st_mode & stat.S_ISVTX:
        # /tmp and the like: shared by design, never ours to make 0700
        raise UnsafeDirectory(
            "the state dir is a shared directory (sticky bit); point QDSL_STATE_DIR at "
            "a directory of its own, e.g. a new subdirectory"
        )
    _own_and_private(root, st, "the state dir", posix)
    return True


def ensure_child(path: Path, label: str, *, create: bool, posix: bool = POSIX) -> bool:
    """A directory inside the root, made private; never a symlink."""
    if is_link(path):
        raise UnsafeDirectory(f"{label} is a symbolic link; qdsl refuses to follow it")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return False
        # FileExistsError: made by a concurrent writer, checked below like any other
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, PRIVATE)
        return ensure_child(path, label, create=False, posix=posix)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f"{label} is not a directory", unusable=True)
    _own_and_private(path, st, label, posix)
    return True


def _own_and_private(path: Path, st: os.stat_result, label: str, posix: bool) -> None:
    if not posix:
        return  # Windows: the user profile's ACLs keep it private
    if st.st_uid != os.geteuid():
        raise UnsafeDirectory(
            f"{label} belongs to another user (uid {st.st_uid}); qdsl keeps its state only "
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


def state_dir_error(exc: UnsafeDirectory | OSError) -> UsageError:
    """The typed error for a state dir qdsl cannot use, saying what to do."""
    if isinstance(exc, UnsafeDirectory) and exc.unusable:
        return UsageError(
            "state_dir_unusable",
            f"cannot use the qdsl state directory: {exc}",
            hint="set QDSL_STATE_DIR to a writable directory of your own",
            retryable=False,
        )
    if isinstance(exc, UnsafeDirectory):
        return UsageError(
            "state_dir_unsafe",
            f"qdsl refuses to use its state dir: {exc}",
            hint=UNSAFE_HINT,
            retryable=False,
        )
    return UsageError(
        "state_dir_unusable",
        f"cannot use the qdsl state directory ({exc.strerror or type(exc).__name__})",
        hint="set QDSL_STATE_DIR to a writable directory of your own",
        retryable=False,
    )


def private_root(*, create: bool = True) -> Path:
    """The state root (QDSL_STATE_DIR, else the platform's), checked and made private."""
    root = state_root()
    try:
        ensure_root(root, create=create)
    except (UnsafeDirectory, OSError) as exc:
        raise state_dir_error(exc) from None
    return root


def private_child(name: str, *, create: bool = True) -> Path:
    """`<state dir>/<name>`, a private directory of the user (created when missing)."""
    root = private_root(create=create)
    path = root / name
    try:
        ensure_child(path, f"the {name} directory of the state dir", create=create)
    except (UnsafeDirectory, OSError) as exc:
        raise state_dir_error(exc) from None
    return path


def refuse_unsafe_file(path: Path, label: str, *, posix: bool = POSIX) -> None:
    """A file qdsl keeps in the state dir: absent, or a regular file of the user,
    never a symlink (UsageError `state_dir_unsafe` otherwise)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise state_dir_error(exc) from None
    if stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_reparse_tag", 0)):
        reason = f"{label} is a symbolic link; qdsl refuses to follow it"
    elif not stat.S_ISREG(st.st_mode):
        reason = f"{label} is not a regular file"
    elif posix and st.st_uid != os.geteuid():
        reason = f"{label} belongs to another user (uid {st.st_uid})"
    else:
        return
    raise state_dir_error(UnsafeDirectory(reason))
