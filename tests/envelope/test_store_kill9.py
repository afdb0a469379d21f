"""kill -9 at random points of writers and collectors, with the POSIX calls
and without them (the Windows path): every ref a writer was told is
persisted reads back whole, no ref file is ever torn, and the next
collection clears what the dead process left (temp files, a stale index).

A child process loops over puts (for a tenant or none, up to 200 KB), reads
and collections (with refs of a 1 ms TTL, so collections delete files and
rewrite the index all the time) and reports each finished put on a pipe;
once the child has written its first ref, the parent kills it with SIGKILL
after a random delay, then checks the store.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from store_suites import PORTABLE, deep

from qdsl.envelope import atomic
from qdsl.envelope.collect import TEMP_GRACE_MS
from qdsl.envelope.store import RefStore

TRIALS = 500 if deep() else 50
TTL = 10**9
TENANTS = ("t1", "t2", None)


def _store(root: Path, ttl_ms: int = TTL) -> RefStore:
    return RefStore(root, ttl_ms=ttl_ms, max_count=10**6, max_bytes=10**12, grace_ms=0)


def _child(root: str, seed: int, fd: int, caps: atomic.Caps) -> None:
    atomic.CAPS = caps
    rng = random.Random(seed)
    store = _store(Path(root))
    short = _store(Path(root), ttl_ms=1)
    while True:
        roll = rng.random()
        if roll < 0.5:
            payload = rng.randbytes(rng.choice([0, 100, 5000, 200_000]))
            tenant = rng.choice(TENANTS)
            rec = store.put("run", payload, tenant=tenant)
            line = f"{rec.ref_id} {hashlib.sha256(payload).hexdigest()} {tenant or '-'}\n"
            os.write(fd, line.encode())
        elif roll < 0.7:
            short.put("short", b"gone soon")
        elif roll < 0.85:
            store.gc()
        else:
            for rec in [r for r in store.records() if r.operation == "run"][-3:]:
                store.read_bytes(rec.ref_id, tenant=rec.tenant)


def _age_temps(root: Path) -> None:
    """Without a pid probe, a dead writer's temp goes once old: make it old."""
    past = time.time() - 2 * TEMP_GRACE_MS / 1000
    for temp in root.rglob("*.tmp"):
        os.utime(temp, (past, past))


def _check(root: Path, reported: dict[str, tuple[str, str | None]]) -> int:
    store = _store(root)
    for ref_id, (sha, tenant) in reported.items():
        data = store.read_bytes(ref_id, tenant=tenant)  # raises if lost or torn
        assert hashlib.sha256(data).hexdigest() == sha
    store.gc()
    records = store.records()
    files = {p.stem for p in (root / "refs").glob("*/*.json")}
    assert {r.ref_id for r in records} == files  # every ref file has a whole header
    lines = (root / "refs" / "index.jsonl").read_bytes().splitlines()
    assert sorted(json.loads(x)["refId"] for x in lines) == sorted(files)  # rebuilt, parses
    for rec in records[-20:]:
        assert hashlib.sha256(store.read_bytes(rec.ref_id, tenant=rec.tenant)).hexdigest() == (
            rec.sha256
        )
    assert not list(root.rglob("*.tmp"))
    return len(records)


@pytest.mark.parametrize("caps", [atomic.CAPS, PORTABLE], ids=["posix", "portable"])
def test_kill9_at_random_points_loses_and_tears_nothing(
    ram_dir: Path, caps: atomic.Caps, record_property: Any
) -> None:
    ctx = mp.get_context("fork")
    rng = random.Random(TRIALS)
    reported: dict[str, tuple[str, str | None]] = {}
    killed_mid_run = 0
    exits: list[int | None] = []
    for trial in range(TRIALS):
        read_fd, write_fd = os.pipe()
        proc = ctx.Process(target=_child, args=(str(ram_dir), trial, write_fd, caps))
        proc.start()
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            first = pipe.readline()  # the child is running: kill it at a random point after
            time.sleep(rng.uniform(0, 0.05))
            assert proc.pid is not None
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(timeout=60)
            killed_mid_run += proc.exitcode == -signal.SIGKILL
            exits.append(proc.exitcode)
            fresh: dict[str, tuple[str, str | None]] = {}
            for line in (first + pipe.read()).decode().splitlines():
                ref_id, sha, tenant = line.split(" ")
                fresh[ref_id] = (sha, None if tenant == "-" else tenant)
        if caps == PORTABLE:
            _age_temps(ram_dir)
        _check(ram_dir, fresh)
        reported |= fresh
    left = _check(ram_dir, reported)
    print(
        f"\nkill -9 ({'portable' if caps == PORTABLE else 'posix'}): {TRIALS} trials, "
        f"{killed_mid_run} killed mid-run, {len(reported)} acknowledged refs all intact, "
        f"{left} refs in the store"
    )
    record_property("kill9", {"trials": TRIALS, "acknowledged": len(reported)})
    assert killed_mid_run == TRIALS, exits  # no writer failed on its own
    assert len(reported) >= TRIALS  # each writer wrote before it was killed
