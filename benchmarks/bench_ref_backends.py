"""The two ref store backends side by side: file store vs PostgreSQL store.

    .venv/bin/python benchmarks/bench_ref_backends.py [--quick] [--admin-url URL]

Per payload size (30 KB, 1 MB, 10 MB): median wall time of `put`, `load` (as
the ref's tenant: seal, tenant, expiry and sha256 checked) and of a `gc` with
nothing to collect over a store at its count cap (50 refs), and the ratio
PostgreSQL / file. The file store writes to a temp dir on the working disk
(with its fsyncs, as the CLI does); PostgreSQL runs in a throwaway database
on the local server, migrated to head, through one pooled connection (as a
server process keeps it). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.dataset import throwaway_pg
from qdsl.envelope.pg_store import PgRefStore
from qdsl.envelope.ref_api import RefStoreProtocol
from qdsl.envelope.store import RefStore
from qdsl.facts.db import make_engine, upgrade

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SIZES = (("30 KB", 30_000), ("1 MB", 1_000_000), ("10 MB", 10_000_000))
CAPS: dict[str, Any] = {"ttl_ms": 600_000, "max_count": 50, "max_bytes": 10**10, "grace_ms": 0}


def timed(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def payload_of(size: int) -> bytes:
    row = {"id": "0", "title": "项目 title with some text", "status": "active"}
    per = len(json.dumps(row, ensure_ascii=False).encode()) + 1
    items = [{**row, "id": str(i)} for i in range(max(1, size // per))]
    return json.dumps({"ok": True, "data": {"items": items}}, ensure_ascii=False).encode()


def measure(store: RefStoreProtocol, payload: bytes, repeat: int) -> tuple[float, float, float]:
    ref = store.put("run", payload, tenant="t1").ref_id
    t_put = timed(lambda: store.put("run", payload, tenant="t1"), repeat)
    t_load = timed(lambda: store.load(ref, tenant="t1"), repeat)
    store.gc(prune_all=True)
    for _ in range(50):
        store.put("run", b'{"ok": true}', tenant="t1")
    t_gc = timed(store.gc, repeat)
    store.gc(prune_all=True)
    return t_put, t_load, t_gc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_ref_backends")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--admin-url", default=ADMIN_URL)
    args, _unknown = ap.parse_known_args(argv)
    repeat = 3 if args.quick else 9
    rows = []
    with throwaway_pg(args.admin_url) as url, tempfile.TemporaryDirectory() as tmp:
        upgrade(url)
        engine = make_engine(url, pool_size=1)
        try:
            pg = PgRefStore(engine, **CAPS)
            files = RefStore(Path(tmp) / "state", **CAPS)
            for label, size in SIZES:
                payload = payload_of(size)
                file_t = measure(files, payload, repeat)
                pg_t = measure(pg, payload, repeat)
                for what, f, p in zip(("put", "load", "gc (50 refs)"), file_t, pg_t, strict=True):
                    rows.append((label, what, f * 1000, p * 1000))
        finally:
            engine.dispose()
    print("| payload | operation | file (ms) | PostgreSQL (ms) | PostgreSQL / file |")
    print("| --- | --- | ---: | ---: | ---: |")
    for label, what, f, p in rows:
        print(f"| {label} | {what} | {f:.2f} | {p:.2f} | {p / f:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
