"""The collector is held off only for large builds, and comes back as it was."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from qdsl.executor.gc_pause import LARGE_ROWS, collector_held


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = gc.isenabled()
    yield
    if before:
        gc.enable()
    else:
        gc.disable()


def test_a_small_build_leaves_the_collector_alone() -> None:
    gc.enable()
    with collector_held(LARGE_ROWS - 1):
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_large_build_holds_it_off_and_gives_it_back() -> None:
    gc.enable()
    with collector_held(LARGE_ROWS):
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_stays_off_if_the_caller_had_turned_it_off() -> None:
    gc.disable()
    with collector_held(LARGE_ROWS):
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_in_the_build_gives_it_back() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector_held(LARGE_ROWS):
        raise ValueError("boom")
    assert gc.isenabled()


def test_it_comes_back_only_when_no_thread_is_building() -> None:
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_held(LARGE_ROWS):
            inside.set()
            release.wait(timeout=60)

    worker = threading.Thread(target=other)
    worker.start()
    assert inside.wait(timeout=60)
    with collector_held(LARGE_ROWS):
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread is still building
    release.set()
    worker.join(timeout=60)
    assert gc.isenabled()
