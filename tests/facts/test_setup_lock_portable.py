"""The SQLite set-up lock with flock (POSIX) and without it (the Windows
path, SQLite's own exclusive transaction): mutual exclusion across
processes, no stale lock after kill -9, parallel first calls seed once."""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from qdsl.facts import db
from qdsl.facts.db import setup_lock
from qdsl.facts.demo.data import DEMO_TENANTS, build_demo
from qdsl.facts.demo.setup import ensure_demo

FLOCK = db.FLOCK


@pytest.fixture(params=[True, False], ids=["flock", "portable"])
def flock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    flag = bool(request.param)
    if flag and not FLOCK:
        pytest.skip("no fcntl on this platform")
    monkeypatch.setattr(db, "FLOCK", flag)
    monkeypatch.setattr(db, "SETUP_LOCK_WAIT_S", 60.0)
    return flag


def _hold(url: str, log: str, rounds: int) -> None:
    engine = create_engine(url)
    for _ in range(rounds):
        with setup_lock(engine):
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, f"{os.getpid()} in\n".encode())
            time.sleep(0.002)  # give a broken lock the chance to overlap
            os.write(fd, f"{os.getpid()} out\n".encode())
            os.close(fd)


def test_one_holder_at_a_time(tmp_path: Path, flock: bool) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    log = tmp_path / "log"
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_hold, args=(url, str(log), 8)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 6 * 8 * 2
    for enter, leave in zip(lines[::2], lines[1::2], strict=True):
        pid = enter.split()[0]
        assert (enter, leave) == (f"{pid} in", f"{pid} out")


def _hold_forever(url: str, fd: int) -> None:
    engine = create_engine(url)
    rng = random.Random(os.getpid())
    first = True
    while True:
        with setup_lock(engine):
            if first:
                os.write(fd, b"x")
                first = False
            time.sleep(rng.uniform(0, 0.003))


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path, flock: bool) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    engine = create_engine(url)
    ctx = mp.get_context("fork")
    rng = random.Random(7)
    for _ in range(20):
        read_fd, write_fd = os.pipe()
        proc = ctx.Process(target=_hold_forever, args=(url, write_fd))
        proc.start()
        os.close(write_fd)
        assert os.read(read_fd, 1) == b"x"  # it has held the lock once
        os.close(read_fd)
        time.sleep(rng.uniform(0, 0.01))
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=60)
        with setup_lock(engine):  # raises setup_lock_timeout if the lock were stale
            pass


def _first_call(url: str, out: Any) -> None:
    status = ensure_demo(url, count_rows=True)
    out.put((list(status.seeded_tenants), sum(status.rows.values())))


def test_parallel_first_calls_seed_once_without_flock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "FLOCK", False)
    url = f"sqlite:///{tmp_path / 'race.sqlite3'}"
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_first_call, args=(url, queue)) for _ in range(3)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    seeded = [t for tenants, _rows in results for t in tenants]
    assert sorted(seeded) == sorted(DEMO_TENANTS)  # each tenant seeded by exactly one process
    assert {rows for _t, rows in results} == {build_demo().total_rows()}
