"""Benchmark the envelope adapter and the ref store (issue 5).

    .venv/bin/python benchmarks/bench_envelope.py [--quick]

Measures: envelope + persist for 30 KB, 1 MB and 20 MB results (median wall
time of emit_success into memory, with its parts: JSON encoding, store write
with fsync, preview); GC over 10,000 refs (nothing to do / all expired / count
cap down to 50); start-up of `qdsl refs list` and `qdsl --version` against
`python -c pass`. Prints a Markdown table. Uses a temp state dir.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from qdsl.envelope.budget import RefFields, dumps, large_envelope
from qdsl.envelope.emit import emit_success, success_envelope
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


def bench_emit(root: Path, quick: bool) -> None:
    store = RefStore(root, ttl_ms=600_000, max_count=1000, max_bytes=10**10)
    settings = IoSettings()
    for label, size in (("30 KB", 30_000), ("1 MB", 1_000_000), ("20 MB", 20_000_000)):
        data = result_of_size(size)
        repeat = 2 if size > 5_000_000 or quick else 7
        env = success_envelope("run", data, trace_id="t")
        text = dumps(env)
        payload = (text + "\n").encode()
        ref = RefFields("r" + "0" * 33, True, len(payload), "0" * 64, "x", 24576)
        emit = partial(emit_success, "run", data, store=store, settings=settings, trace_id="t")
        t_total = timed(lambda: emit(out=io.StringIO()), repeat)  # noqa: B023
        t_dumps = timed(partial(dumps, env), repeat)
        t_put = timed(partial(store.put, "run", payload), repeat)
        t_preview = timed(partial(large_envelope, env, ref, 24576), repeat)
        t_sha = timed(partial(hashlib.sha256, payload), repeat)
        ROWS.append(
            (
                f"envelope + persist, {label} ({len(payload) / 1e6:.2f} MB JSON)",
                f"{t_total * 1000:.1f} ms",
                f"encode {t_dumps * 1000:.1f} · write+fsync {t_put * 1000:.1f} · "
                f"sha256 {t_sha * 1000:.1f} · preview {t_preview * 1000:.2f} ms",
            )
        )


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


def bench_gc(base: Path) -> None:
    n = 10_000
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


def bench_startup(state: Path, quick: bool) -> None:
    qdsl = str(Path(sys.executable).with_name("qdsl"))
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    repeat = 5 if quick else 15
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "qdsl --version": [qdsl, "--version"],
        "qdsl --json refs list": [qdsl, "--json", "refs", "list"],
    }
    base = None
    for label, argv in cases.items():
        run = partial(subprocess.run, argv, env=env, capture_output=True, check=True)
        run()
        t = timed(run, repeat)
        base = base or t
        ROWS.append(
            (f"start-up: {label}", f"{t * 1000:.0f} ms", f"+{(t - base) * 1000:.0f} ms over python")
        )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "qdsl.cli.main", "--json", "refs", "list"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    heavy = []
    for line in proc.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[1].isdigit() and "." not in parts[2].strip():
            heavy.append((int(parts[1]), parts[2].strip()))
    top = ", ".join(f"{name} {us / 1000:.0f}" for us, name in sorted(heavy, reverse=True)[:5])
    ROWS.append(("importtime, top-level packages of `refs list` (ms)", "", top))


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory(prefix="qdsl-bench-") as tmp:
        base = Path(tmp)
        bench_emit(base / "emit", quick)
        bench_gc(base)
        bench_startup(base / "startup", quick)
    print("| benchmark | median | notes |")
    print("| --- | --- | --- |")
    for name, value, notes in ROWS:
        print(f"| {name} | {value} | {notes} |")


if __name__ == "__main__":
    main()
