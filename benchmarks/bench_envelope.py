"""The envelope adapter and the ref store.

    python -m benchmarks.bench_envelope [--quick]

1. A large result through `emit_success` (encode, store the full envelope in
   the ref store with fsync, print the bounded preview) against `json.dumps`
   of the same result printed whole: 30 KB, 1 MB and 20 MB, interleaved.
   For scale, the same `emit_success` with the store's two fsyncs (the ref
   file, its directory) skipped, interleaved with both: what durability
   costs. The store itself always fsyncs; only this row skips it.
2. Ref store GC over 10,000 refs (nothing to do / all expired / count cap
   down to 50): absolute times, no alternative.

Uses a temp state dir.
"""

from __future__ import annotations

import hashlib
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import harness as H
from qdsl.envelope import atomic
from qdsl.envelope.emit import emit_success
from qdsl.envelope.records import encode_header, index_line
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefRecord, RefStore, new_ref_id, system_clock

ROWS: list[tuple[str, str, str]] = []


def timed(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def result_of_size(target: int) -> dict[str, Any]:
    row = {"id": "0", "title": "项目 title with some text", "status": "active", "budget": 1234.5}
    per = len(json.dumps(row, ensure_ascii=False).encode()) + 1
    n = max(1, target // per)
    items = [{**row, "id": str(i)} for i in range(n)]
    return {"answer_contract": "entity_list", "answer": {"items": items, "total": n}}


def bench_emit(root: Path, quick: bool) -> list[H.Ratio]:
    """emit_success of a large result (encode, persist with fsync, print the preview)
    against json.dumps of the same result printed whole."""
    store = RefStore(root, ttl_ms=600_000, max_count=1000, max_bytes=10**10)
    settings = IoSettings()
    sizes = (("30 KB", 30_000), ("1 MB", 1_000_000), ("20 MB", 20_000_000))
    out = []
    for label, size in sizes[:2] if quick else sizes:
        data = result_of_size(size)
        repeats = 2 if quick else (5 if size > 5_000_000 else 30)
        emit, unsynced, dumps = H.interleaved(
            [
                partial(_emit, data, store, settings),
                partial(_emit_unsynced, data, store, settings),
                partial(_print_json, data),
            ],
            repeats=repeats,
        )
        path = f"{label} result stored + printed"
        ratio = H.compare(
            path,
            "emit_success",
            "json.dumps + print",
            emit,
            dumps,
            goal=H.at_most(1.5) if label == "1 MB" else None,
        )
        out.append(H.record("envelope_1mb", ratio) if label == "1 MB" else ratio)
        out.append(
            H.compare(
                f"{path}, no fsync (for scale only)",
                "emit_success, fsync skipped",
                "json.dumps + print",
                unsynced,
                dumps,
                goal=None,
            )
        )
        store.gc()
    return out


def _emit(data: Any, store: RefStore, settings: IoSettings) -> None:
    emit_success("run", data, store=store, settings=settings, trace_id="t", out=io.StringIO())


def _emit_unsynced(data: Any, store: RefStore, settings: IoSettings) -> None:
    fsync, fsync_dir = atomic.fsync, atomic.fsync_dir
    atomic.fsync, atomic.fsync_dir = (lambda fd: None), (lambda path: None)
    try:
        _emit(data, store, settings)
    finally:
        atomic.fsync, atomic.fsync_dir = fsync, fsync_dir


def _print_json(data: Any) -> None:
    print(json.dumps(data), file=io.StringIO())


def fill_store(root: Path, n: int, now: int, ttl_ms: int) -> RefStore:
    """Write n small refs straight to disk (setup only, not measured)."""
    store = RefStore(root, ttl_ms=ttl_ms, max_count=10**9, max_bytes=10**12, clock=lambda: now)
    lines = []
    for i in range(n):
        payload = b'{"i": %d}\n' % i
        rec = RefRecord(
            new_ref_id("run", now - n + i),
            "run",
            now - n + i,
            now - n + i + ttl_ms,
            len(payload),
            hashlib.sha256(payload).hexdigest(),
        )
        path = store.dir / rec.relpath
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_bytes(encode_header(rec) + payload)
        lines.append(index_line(rec))
    (store.dir / "index.jsonl").write_bytes(b"".join(lines))
    return store


def bench_gc(base: Path, quick: bool) -> None:
    n = 500 if quick else 10_000
    now = system_clock()
    small = fill_store(base / "gc-default", 50, now, ttl_ms=3_600_000)
    t = timed(small.gc, 20)
    ROWS.append(("GC, 50 live refs (default cap), nothing to do", f"{t * 1000:.2f} ms", ""))
    store = fill_store(base / "gc-noop", n, now, ttl_ms=3_600_000)
    t = timed(store.gc, 5)
    ROWS.append((f"GC, {n:,} live refs, nothing to do (start-up check)", f"{t * 1000:.1f} ms", ""))

    store = fill_store(base / "gc-expired", n, now, ttl_ms=3_600_000)
    store.clock = lambda: now + 7_200_000
    t0 = time.perf_counter()
    report = store.gc()
    t = time.perf_counter() - t0
    ROWS.append(
        (f"GC, {n:,} expired refs removed", f"{t * 1000:.0f} ms", f"{report.expired} removed")
    )

    store = fill_store(base / "gc-cap", n, now, ttl_ms=3_600_000)
    store.max_count = 50
    store.grace_ms = 0  # the refs were all written in the last few seconds
    t0 = time.perf_counter()
    report = store.gc()
    t = time.perf_counter() - t0
    ROWS.append(
        (
            f"GC, {n:,} live refs down to the count cap 50",
            f"{t * 1000:.0f} ms",
            f"{report.evicted} evicted",
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = H.arguments("bench_envelope", __doc__)
    args, _ = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as tmp:
        base = Path(tmp)
        ratios = bench_emit(base / "emit", args.quick)
        bench_gc(base, args.quick)
    H.print_ratios("Envelope and ref store vs json.dumps", ratios)
    print("### Ref store GC (no alternative: absolute times)\n")
    print(H.table([list(r) for r in ROWS], ["case", "median", "notes"]))
    print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
