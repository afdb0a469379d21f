"""The ref store's collector: expiry, caps with a grace period, leftovers.

Several collectors may run at once, each from its own scan and without a
lock. That is safe because each decision only removes: a scan that misses a
newer ref evicts no more than a full scan would (the oldest of a subset are
among the oldest of the whole), a ref younger than the grace period is never
evicted by anyone, and an index rewrite that loses a concurrent append loses
only a cache line (the next scan reads that ref's header).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from qdsl.envelope import atomic
from qdsl.envelope.records import RefRecord, index_line, ref_id_time_ms
from qdsl.envelope.ref_api import PruneOwner, over_cap_warning, plan_eviction, prunes

if TYPE_CHECKING:
    from qdsl.envelope.ref_api import GcReport
    from qdsl.envelope.store import RefStore

INDEX = "index.jsonl"
TMP_SUFFIX = ".tmp"
# A temp file younger than this may be a write in flight (where the writer
# cannot be asked whether it still runs).
TEMP_GRACE_MS = 10 * 60 * 1000
IN_FLIGHT: set[str] = set()  # temp names this process is writing now


def collect(
    store: RefStore,
    report: GcReport,
    *,
    prune_before_ms: int | None,
    prune_all: bool,
    prune_tenant: PruneOwner,
) -> None:
    scan = store.scan()
    report.warnings += scan.warnings
    report.vanished = scan.stale_lines if scan.index_usable else 0
    now = store.clock()
    pruned = [
        r
        for r in scan.records
        if prunes(r, prune_tenant)
        and (prune_all or (prune_before_ms is not None and r.created_ms < prune_before_ms))
    ]
    pruned_ids = {r.ref_id for r in pruned}
    keep, drop = _plan(store, scan.records, now, report, pruned=pruned_ids)
    doomed = [p for p in scan.unreadable if _expired_by_name(store, p, now)]
    temps = [p for p in scan.temps if _stale_temp(p)]
    if not (drop or doomed or temps or scan.junk or scan.index_stale):
        return
    _drop(store, drop, report, keep, pruned_ids=pruned_ids, now=now)
    report.orphans += sum(_unlink(p) for p in [*scan.junk, *doomed])
    report.temps += sum(_unlink(p) for p in temps)
    if drop or scan.index_stale:
        # In use elsewhere (Windows): the index is only a cache, next time then.
        with contextlib.suppress(PermissionError):
            _rewrite_index(store.dir / INDEX, keep)
    recent = {day_of_ms(now - store.grace_ms), day_of_ms(now)}
    for day_dir in scan.day_dirs:
        if day_dir.name not in recent:
            with contextlib.suppress(OSError):
                os.rmdir(day_dir)  # only succeeds when empty


def _drop(
    store: RefStore,
    drop: list[RefRecord],
    report: GcReport,
    keep: list[RefRecord],
    *,
    pruned_ids: set[str],
    now: int,
) -> None:
    """Remove the refs planned to go, counting only those removed. One that cannot
    be removed (a read-only dir; in use on Windows) stays in `keep`, is counted in
    `report.failed` and, when an explicit prune asked for it, named in a warning;
    an expired one is collected again by the next command."""
    reasons: set[str] = set()
    for rec in drop:
        try:
            atomic.unlink(store.dir / rec.relpath)
        except FileNotFoundError:
            continue  # removed meanwhile by another collector: not ours to count
        except OSError as exc:
            report.failed += 1
            if rec.ref_id in pruned_ids:  # asked for by a prune: say why it is still there
                report.unpruned += 1
                reasons.add(exc.strerror or type(exc).__name__)
            keep.append(rec)
            continue
        if rec.ref_id in pruned_ids:
            report.pruned += 1
            report.evicted += 1
        elif rec.expires_ms <= now:
            report.expired += 1
        else:
            report.evicted += 1
    if report.failed:
        keep.sort(key=lambda r: (r.created_ms, r.ref_id))
    if reasons:
        report.warnings.append(
            f"{report.unpruned} ref(s) could not be removed ({'; '.join(sorted(reasons))}); "
            "they are kept"
        )


def _plan(
    store: RefStore,
    records: list[RefRecord],
    now: int,
    report: GcReport,
    *,
    pruned: set[str],
) -> tuple[list[RefRecord], list[RefRecord]]:
    """(kept, dropped): the explicitly pruned and the expired first, then the
    oldest over the caps, each tenant's, then the store's (`plan_eviction`;
    counted in `report` once removed, by `_drop`).

    A ref younger than the grace period is never evicted by the caps (an
    explicit prune still removes it); the newest ref is kept even alone over
    the byte cap.
    """
    keep: list[RefRecord] = []
    drop: list[RefRecord] = []
    for r in records:
        if r.ref_id in pruned or r.expires_ms <= now:
            drop.append(r)
        else:
            keep.append(r)

    evict = plan_eviction(
        keep,
        now=now,
        max_count=store.max_count,
        max_bytes=store.max_bytes,
        grace_ms=store.grace_ms,
        tenant_max_count=store.tenant_max_count,
        tenant_max_bytes=store.tenant_max_bytes,
    )
    drop += [r for r in keep if r.ref_id in evict]
    keep = [r for r in keep if r.ref_id not in evict]
    if keep and keep[-1].bytes > store.max_bytes:
        report.warnings.append(over_cap_warning(keep[-1], store.max_bytes))
    return keep, drop


def day_of_ms(ms: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


def _expired_by_name(store: RefStore, path: Path, now: int) -> bool:
    born = ref_id_time_ms(path.name.removesuffix(".json"))
    return born is None or born + store.ttl_ms <= now


def _stale_temp(path: Path) -> bool:
    """A temp left by a crashed write (never one being written now)."""
    if path.name in IN_FLIGHT:
        return False
    parts = path.name.split(".")  # `.<refId>.<pid>.tmp`, `index.jsonl.<hex>.<pid>.tmp`
    pid = int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else -1
    if pid == os.getpid():
        return True  # ours and not in flight: a failed write's leftover
    alive = atomic.pid_alive(pid) if pid > 0 else False
    if alive is False:
        return True
    try:  # alive, or cannot tell (Windows): only once old
        age_ms = time.time() * 1000 - os.lstat(path).st_mtime * 1000
    except OSError:
        return False
    return age_ms > TEMP_GRACE_MS


def _unlink(path: Path) -> int:
    """1 if removed; a file in use or already gone is left to the next collection."""
    try:
        atomic.unlink(path)
    except OSError:
        return 0
    return 1


def _rewrite_index(index: Path, keep: list[RefRecord]) -> None:
    body = b"".join(index_line(r) for r in keep)
    temp = index.with_name(f"{index.name}.{os.urandom(4).hex()}.{os.getpid()}{TMP_SUFFIX}")
    IN_FLIGHT.add(temp.name)
    try:
        fd = atomic.open_temp(temp)
        try:
            atomic.write_all(fd, body)
            atomic.fsync(fd)
        finally:
            os.close(fd)
        atomic.replace(temp, index)
    finally:
        with contextlib.suppress(OSError):
            atomic.unlink(temp)
        IN_FLIGHT.discard(temp.name)
