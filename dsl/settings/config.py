"""Where qdsl keeps its state, and the tables of its `config.toml`.

One reader for the state root and the config file, shared by the ref-store
settings (`[io]`) and the input limits (`[limits]`), so both agree on the path,
the encoding and the errors; and one way to create the root's missing
directories private, shared by the ref store and the database layer.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import UsageError

# The settings readers' seam to the environment: one setting (`getenv`), and the
# key of a cache of settings read from some names (`environ_key`) (`env_lookup`).
from qdsl.dsl.settings import env_lookup

getenv = env_lookup.getenv
environ_key = env_lookup.environ_key

# Where the platform's state dir is when QDSL_STATE_DIR is unset (platformdirs
# reads these): a cache of settings from config.toml must be keyed on them too.
STATE_ROOT_ENV = ("QDSL_STATE_DIR", "HOME", "XDG_STATE_HOME")


def state_root(env: Mapping[str, str] | None = None) -> Path:
    """QDSL_STATE_DIR, else the platform's user state dir; not created here."""
    env = os.environ if env is None else env
    override = env.get("QDSL_STATE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_state_path("qdsl")


PRIVATE = 0o700


def make_private_dirs(path: Path, *, chmod: bool = os.name == "posix") -> None:
    """Create `path` and every missing parent, each mode 0700.

    `Path.mkdir(parents=True)` gives the parents the umask's mode (0755), so a
    nested state dir would sit in directories others can list. Directories that
    exist are left as they are (they may be shared, like a home directory).
    `chmod` undoes the umask on each directory made here; it never adds bits.
    OSError other than a concurrent creation passes on.
    """
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for made in reversed(missing):
        try:
            os.mkdir(made, PRIVATE)
        except FileExistsError:
            continue
        if chmod:
            os.chmod(made, PRIVATE)


def config_table(root: Path, name: str, *, unreadable_ok: bool = False) -> dict[str, Any]:
    """The `[name]` table of `<root>/config.toml`, or {} when there is none.

    `unreadable_ok` keeps defaults when the file exists but cannot be read, for a
    reader whose defaults are the safe ones and whose caller reports the fault.
    """
    try:
        raw = _read_own(root / "config.toml")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        if unreadable_ok:
            return {}
        reason = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise UsageError(
            "bad_config",
            f"cannot read the qdsl config file ({reason})",
            hint="config.toml in the state dir (`qdsl refs path`) must be a regular file of "
            "your own, not a symbolic link, and readable",
        ) from exc
    import tomllib

    try:
        doc = tomllib.loads(raw.decode("utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(
            "bad_config",
            f"the qdsl config file is not valid TOML: {exc}",
            hint="fix config.toml in the state dir (`qdsl refs path` shows the dir)",
        ) from None
    table = doc.get(name, {})
    if not isinstance(table, dict):
        raise UsageError(
            "bad_config", f"[{name}] in config.toml must be a table", hint=f"write [{name}]"
        )
    return table


def _read_own(path: Path) -> bytes:
    """The bytes of `path`, a regular file of the user opened without following a
    symlink: settings written by someone else (a link, another user's file) are
    not taken. OSError otherwise."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(0, "not a regular file")
        if os.name == "posix" and info.st_uid != os.geteuid():
            raise PermissionError(0, "the file belongs to another user")
        return handle.read()
