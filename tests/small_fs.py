"""A small file system of its own (tmpfs) for tests of a full or read-only disk.

Mounting needs root (CAP_SYS_ADMIN); where it is refused the test that asked
is skipped, and the fault-injection tests beside it still cover the layer.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class SmallFs:
    """Mounts tmpfs file systems under `base`; `unmount_all` at the end."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.mounted: list[Path] = []

    def mount(self, options: str) -> Path:
        """A new tmpfs (e.g. `size=64k`, `nr_inodes=8`), mode 0700, empty."""
        where = self.base / f"fs{len(self.mounted)}"
        where.mkdir(mode=0o700)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"{options},mode=0700", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip()[:200]}")
        self.mounted.append(where)
        return where

    def read_only(self, where: Path) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)

    def unmount_all(self) -> None:
        for where in reversed(self.mounted):
            subprocess.run(["umount", "-l", str(where)], check=False)


@contextlib.contextmanager
def small_fs(base: Path) -> Iterator[SmallFs]:
    if os.name != "posix":
        pytest.skip("tmpfs is Linux's")
    fs = SmallFs(base)
    try:
        yield fs
    finally:
        fs.unmount_all()


def fill(where: Path, leave: int = 0) -> list[Path]:
    """Fill the file system of `where` with 4 KiB files until at most `leave`
    bytes are free; the files, to free space again one page at a time."""
    files: list[Path] = []
    while True:
        free = os.statvfs(where).f_bavail * os.statvfs(where).f_frsize
        if free <= leave:
            return files
        path = where / f"filler-{len(files)}"
        try:
            path.write_bytes(b"\0" * 4096)
        except OSError:
            path.unlink(missing_ok=True)
            return files
        files.append(path)
