"""Fixtures for the envelope and ref store tests: a store with an injected clock."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from qdsl.envelope.store import RefStore

T0 = 1_795_000_000_000  # a fixed epoch-ms "now"


class FakeClock:
    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_store(tmp_path: Path, clock: FakeClock) -> Callable[..., RefStore]:
    # grace_ms=0 by default: these stores run on a fake clock, and the cap
    # tests want eviction at once; the grace period has tests of its own.
    def make(
        *, ttl_ms: int = 60_000, max_count: int = 50, max_bytes: int = 10_000_000, grace_ms: int = 0
    ) -> RefStore:
        return RefStore(
            tmp_path / "state",
            ttl_ms=ttl_ms,
            max_count=max_count,
            max_bytes=max_bytes,
            grace_ms=grace_ms,
            clock=clock,
        )

    return make


@pytest.fixture
def files_under() -> Callable[[Path], list[str]]:
    def list_files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    return list_files


@pytest.fixture
def ram_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on tmpfs when there is one, else tmp_path.

    The concurrency and kill -9 suites test processes racing and dying, not
    power loss: on tmpfs their fsyncs cost nothing (20 ms each on this CI
    disk), so they can run thousands of operations in CI.
    """
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="qdsl-refs-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
