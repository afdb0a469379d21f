"""Fixtures for the envelope and ref store tests: a store with an injected clock."""

from __future__ import annotations

from collections.abc import Callable
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
    def make(*, ttl_ms: int = 60_000, max_count: int = 50, max_bytes: int = 10_000_000) -> RefStore:
        return RefStore(
            tmp_path / "state", ttl_ms=ttl_ms, max_count=max_count, max_bytes=max_bytes, clock=clock
        )

    return make


@pytest.fixture
def files_under() -> Callable[[Path], list[str]]:
    def list_files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    return list_files
