"""8 processes putting, reading and collecting at once: no lost, torn or
mismatched ref, none deleted before its TTL, and the index still parses."""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import random
from pathlib import Path

from qdsl.dsl.errors import RefError
from qdsl.envelope.store import RefStore

WORKERS = 8
PUTS = 25
TTL_MS = 10 * 60 * 1000


def _store(root: str, ttl_ms: int = TTL_MS) -> RefStore:
    return RefStore(Path(root), ttl_ms=ttl_ms, max_count=100_000, max_bytes=10**10)


def _worker(root: str, seed: int, out: mp.Queue[object]) -> None:
    try:
        out.put(_work(root, seed))
    except Exception as exc:  # report, so the parent never waits on a dead child
        out.put(([], [f"worker {seed} crashed: {type(exc).__name__}: {exc}"]))


def _work(root: str, seed: int) -> tuple[list[tuple[str, str]], list[str]]:
    rng = random.Random(seed)
    store = _store(root)
    # Refs with a 1 ms TTL expire at once, so every GC rewrites the index while
    # other processes append to it: the long-lived refs must all survive.
    short = _store(root, ttl_ms=1)
    mine: list[tuple[str, str]] = []
    errors: list[str] = []
    for i in range(PUTS):
        payload = json.dumps({"w": seed, "i": i, "pad": "x" * rng.randint(0, 60_000)}).encode()
        rec = store.put(f"op{seed}", payload)
        mine.append((rec.ref_id, hashlib.sha256(payload).hexdigest()))
        for ref_id, sha in rng.sample(mine, min(3, len(mine))):
            data = store.read_bytes(ref_id)
            if hashlib.sha256(data).hexdigest() != sha:
                errors.append(f"mismatch {ref_id}")
        others = store.records()
        for rec2 in rng.sample(others, min(3, len(others))):
            try:
                data = store.read_bytes(rec2.ref_id)
            except RefError as exc:
                if rec2.expires_ms > store.clock():  # only an expired ref may be gone
                    errors.append(f"{exc.code} reading live {rec2.ref_id}")
                continue
            if hashlib.sha256(data).hexdigest() != rec2.sha256:
                errors.append(f"torn {rec2.ref_id}")
        short.put("short", b"gone soon")
        if i % 2 == 0:
            store.gc()
    return mine, errors


def test_eight_processes_put_read_and_collect(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    queue: mp.Queue[object] = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(tmp_path), seed, queue)) for seed in range(WORKERS)
    ]
    for p in procs:
        p.start()
    results: list[tuple[list[tuple[str, str]], list[str]]] = [
        queue.get(timeout=120)  # type: ignore[misc]
        for _ in procs
    ]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0

    store = _store(str(tmp_path))
    all_refs: dict[str, str] = {}
    for mine, errors in results:
        assert errors == []
        all_refs.update(dict(mine))
    assert len(all_refs) == WORKERS * PUTS  # ids unique across processes

    index = (tmp_path / "refs" / "index.jsonl").read_text().splitlines()
    parsed = [json.loads(line) for line in index]  # every line parses
    indexed = {d["refId"] for d in parsed if d["operation"] != "short"}
    assert indexed == set(all_refs)  # nothing lost, nothing extra
    for ref_id, sha in all_refs.items():
        assert hashlib.sha256(store.read_bytes(ref_id)).hexdigest() == sha
    store.gc()
    leftovers = [p.name for p in (tmp_path / "refs").rglob("*.tmp")]
    assert leftovers == []
