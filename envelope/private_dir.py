"""Private directories for the ref store: `qdsl.dsl.settings.private_dir`, under the
store's platform capabilities (`atomic.CAPS`, which a test turns off to run the
portable path on Linux).

Every directory the store uses ends up a real directory (no symlink), owned
by the user and mode 0700, or the store refuses to use it.
"""

from __future__ import annotations

from pathlib import Path

from qdsl.dsl.settings import private_dir
from qdsl.dsl.settings.private_dir import UnsafeDirectory
from qdsl.envelope import atomic

__all__ = ["UnsafeDirectory", "ensure_child", "ensure_root"]


def ensure_root(root: Path, *, create: bool) -> bool:
    """The state root, made private; False if it is missing and not created."""
    return private_dir.ensure_root(root, create=create, posix=atomic.CAPS.posix_modes)


def ensure_child(path: Path, label: str, *, create: bool) -> bool:
    """A store directory inside the root, made private; never a symlink."""
    return private_dir.ensure_child(path, label, create=create, posix=atomic.CAPS.posix_modes)
