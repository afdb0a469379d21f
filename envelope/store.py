"""The ref store: large results kept privately for a while (docs/envelopes.md).

Layout under `<state dir>/refs/`: `<YYYY-MM-DD>/<refId>.json` holds the full
envelope exactly as it would have been printed; `index.jsonl` holds one line
per ref (`refId`, `operation`, `createdAt`, `expiresAt`, `bytes`, `sha256`).
The index is the authority: a file without an index line is not a ref.

Crash safety: a ref file is written to a temp file in its own directory,
fsynced and renamed into place; the rename and the index append happen under
one lock (`.lock`, flock) so that the collector, which takes the same lock,
never sees a finished file without its index line, and an index rewrite
(temp + replace) never loses a concurrent append. Readers take no lock: files
are never modified in place and every read is checked against the sha256 of
the index, so a read returns the stored bytes or a typed error, never others.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import RefError
from qdsl.envelope import atomic
from qdsl.envelope.records import (
    REF_ID,
    Clock,
    RefRecord,
    iso_ms,
    new_ref_id,
    parse_iso_ms,
    ref_id_time_ms,
    system_clock,
)

# ids and records live in envelope.records; re-exported for callers
__all__ = ["REF_ID", "Clock", "GcReport", "RefRecord", "RefStore", "StoreWriteError"]
__all__ += ["collect_at_start", "iso_ms", "new_ref_id", "open_store", "parse_iso_ms"]
__all__ += ["ref_id_time_ms", "system_clock"]

INDEX = "index.jsonl"
LOCK = ".lock"
TMP_SUFFIX = ".tmp"
# A temp file of a live process younger than this may be a write in flight.
TEMP_GRACE_MS = 10 * 60 * 1000

_IN_FLIGHT: set[str] = set()  # temp names this process is writing now


@dataclass
class GcReport:
    expired: int = 0
    evicted: int = 0
    vanished: int = 0
    orphans: int = 0
    temps: int = 0
    warnings: list[str] = field(default_factory=list)


class StoreWriteError(Exception):
    """Persisting failed; the caller degrades (resultPersisted: false)."""


class RefStore:
    def __init__(
        self,
        state_root: Path,
        *,
        ttl_ms: int,
        max_count: int,
        max_bytes: int,
        clock: Clock = system_clock,
    ) -> None:
        self.dir = state_root / "refs"
        self.ttl_ms = ttl_ms
        self.max_count = max_count
        self.max_bytes = max_bytes
        self.clock = clock

    # ----------------------------------------------------------------- write
    def put(self, operation: str, payload: bytes) -> RefRecord:
        now = self.clock()
        ref_id = new_ref_id(operation, now)
        record = RefRecord(
            ref_id=ref_id,
            operation=operation,
            created_ms=now,
            expires_ms=now + self.ttl_ms,
            bytes=len(payload),
            sha256=hashlib.sha256(payload).hexdigest(),
        )
        final = self.dir / record.relpath
        temp = final.with_name(f".{ref_id}.{os.getpid()}{TMP_SUFFIX}")
        _IN_FLIGHT.add(temp.name)
        try:
            self._ensure_dir(final.parent)
            fd = atomic.open_temp(temp)
            try:
                atomic.write_all(fd, payload)
                atomic.fsync(fd)
            finally:
                os.close(fd)
            line = (json.dumps(record.to_json(), separators=(",", ":")) + "\n").encode()
            with self._locked():
                atomic.replace(temp, final)
                try:
                    self._append_index(line)
                except BaseException:
                    with contextlib.suppress(OSError):
                        final.unlink()
                    raise
            atomic.fsync_dir(final.parent)
        except OSError as exc:
            # strerror only: str(exc) would carry the absolute path of the store.
            raise StoreWriteError(exc.strerror or type(exc).__name__) from exc
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()
            _IN_FLIGHT.discard(temp.name)
        return record

    def _ensure_dir(self, path: Path) -> None:
        for d in (self.dir.parent, self.dir, path):
            if not d.is_dir():
                d.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(d, 0o700)

    def _append_index(self, line: bytes) -> None:
        fd = os.open(self.dir / INDEX, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            atomic.write_all(fd, line)
            atomic.fsync(fd)
        finally:
            os.close(fd)

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return atomic.exclusive_lock(self.dir / LOCK)

    # ------------------------------------------------------------------ read
    def records(self) -> list[RefRecord]:
        """Index records, last line per id wins; unparseable lines are skipped."""
        try:
            raw = (self.dir / INDEX).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return []
        lines = [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
        try:  # one parse for the whole index; line by line only when a line is bad
            docs: list[Any] = json.loads("[" + ",".join(lines) + "]")
        except ValueError:
            docs = []
            for line in lines:
                with contextlib.suppress(ValueError):
                    docs.append(json.loads(line))
        found: dict[str, RefRecord] = {}
        for doc in docs:
            try:
                rec = RefRecord.from_json(doc)
            except (ValueError, KeyError, TypeError, OverflowError):
                continue
            if REF_ID.match(rec.ref_id):
                found[rec.ref_id] = rec
        return sorted(found.values(), key=lambda r: (r.created_ms, r.ref_id))

    def live(self) -> list[RefRecord]:
        now = self.clock()
        return [r for r in self.records() if r.expires_ms > now]

    def record(self, ref_id: str) -> RefRecord:
        ref_id = ref_id.strip()
        if REF_ID.match(ref_id) is None:
            raise RefError(
                "ref_not_found",
                f"{ref_id!r} is not a ref id",
                hint="ref ids look like r20261101T120000123-run-0123456789; see `qdsl refs list`",
            )
        now = self.clock()
        rec = next((r for r in self.records() if r.ref_id == ref_id), None)
        if rec is None:
            born = ref_id_time_ms(ref_id)
            if born is not None and born + self.ttl_ms <= now:
                raise self._expired(ref_id)
            raise RefError(
                "ref_not_found",
                f"no ref {ref_id} in the store",
                hint="it may have been pruned or evicted by the count/size caps; "
                "rerun the command that produced it (see `qdsl refs list`)",
            )
        if rec.expires_ms <= now:
            raise self._expired(ref_id)
        return rec

    def read_bytes(self, ref_id: str) -> bytes:
        rec = self.record(ref_id)
        try:
            data = (self.dir / rec.relpath).read_bytes()
        except FileNotFoundError:
            raise RefError(
                "ref_not_found",
                f"the file of ref {rec.ref_id} is gone",
                hint="rerun the command that produced it",
            ) from None
        except OSError as exc:
            raise RefError(
                "ref_unreadable",
                f"cannot read ref {rec.ref_id}: {exc.strerror}",
                hint="check the permissions of the state dir (`qdsl refs path`)",
                retryable=True,
            ) from None
        if len(data) != rec.bytes or hashlib.sha256(data).hexdigest() != rec.sha256:
            raise RefError(
                "ref_corrupt",
                f"ref {rec.ref_id} does not match its sha256; it was changed after writing",
                hint="rerun the command that produced it; `qdsl refs prune --all` clears the store",
            )
        return data

    def read_json(self, ref_id: str) -> Any:
        data = self.read_bytes(ref_id)
        try:
            return json.loads(data)
        except ValueError:
            raise RefError(
                "ref_corrupt", f"ref {ref_id} is not JSON", hint="rerun the command"
            ) from None

    @staticmethod
    def _expired(ref_id: str) -> RefError:
        return RefError(
            "ref_expired",
            f"ref {ref_id} has expired",
            hint="rerun the command that produced it (QDSL_REF_TTL_MS sets the lifetime)",
        )

    # -------------------------------------------------------------- collect
    def gc(self, *, prune_before_ms: int | None = None, prune_all: bool = False) -> GcReport:
        """Drop expired refs, then the oldest over the count and byte caps.

        The newest ref is always kept, even alone over the byte cap. Files
        that vanished or cannot be removed are tolerated; leftovers of crashed
        writes (temp files, files without an index line) are swept.
        """
        report = GcReport()
        if not self.dir.is_dir():
            return report
        if prune_before_ms is None and not prune_all and not self._needs_gc():
            return report
        try:
            with self._locked():
                self._gc_locked(report, prune_before_ms, prune_all)
        except OSError as exc:
            report.warnings.append(
                f"ref store cleanup skipped ({exc.strerror or type(exc).__name__})"
            )
        return report

    def _needs_gc(self) -> bool:
        now = self.clock()
        records = self.records()
        if any(r.expires_ms <= now for r in records) or len(records) > self.max_count:
            return True
        if len(records) > 1 and sum(r.bytes for r in records) > self.max_bytes:
            return True
        indexed = {r.relpath for r in records}
        return any(
            name.endswith(TMP_SUFFIX) or f"{day}/{name}" not in indexed
            for day, name in self._files()
        )

    def _files(self) -> Iterator[tuple[str, str]]:
        try:
            days = [d for d in os.scandir(self.dir) if d.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for day in days:
            with contextlib.suppress(OSError):
                for entry in os.scandir(day.path):
                    yield day.name, entry.name
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.dir):
                if entry.name.endswith(TMP_SUFFIX):
                    yield "", entry.name

    def _gc_locked(self, report: GcReport, prune_before_ms: int | None, prune_all: bool) -> None:
        now = self.clock()
        records = self.records()
        keep = self._live(records, report, now, prune_before_ms, prune_all)
        self._cap(keep, report)
        if len(keep) != len(records):
            self._rewrite_index(keep)
        self._sweep({r.relpath for r in keep}, report, now)

    def _live(
        self,
        records: list[RefRecord],
        report: GcReport,
        now: int,
        prune_before_ms: int | None,
        prune_all: bool,
    ) -> list[RefRecord]:
        """The records neither pruned, expired nor vanished (counted in `report`)."""
        keep: list[RefRecord] = []
        for r in records:
            if prune_all or (prune_before_ms is not None and r.created_ms < prune_before_ms):
                report.evicted += 1
            elif r.expires_ms <= now:
                report.expired += 1
            elif not (self.dir / r.relpath).is_file():
                report.vanished += 1
            else:
                keep.append(r)
        return keep

    def _cap(self, keep: list[RefRecord], report: GcReport) -> None:
        """Evict the oldest records over the count and byte caps (in place)."""
        while len(keep) > max(self.max_count, 1):
            keep.pop(0)
            report.evicted += 1
        while len(keep) > 1 and sum(r.bytes for r in keep) > self.max_bytes:
            keep.pop(0)
            report.evicted += 1
        if keep and keep[-1].bytes > self.max_bytes:
            report.warnings.append(
                f"ref {keep[-1].ref_id} ({keep[-1].bytes} bytes) is over the ref store's byte cap "
                f"({self.max_bytes}); it is kept alone until the next result"
            )

    def _sweep(self, kept: set[str], report: GcReport, now: int) -> None:
        """Remove stale temp files, files no record keeps, and empty day folders."""
        for day, name in list(self._files()):
            rel = f"{day}/{name}" if day else name
            path = self.dir / rel
            if name.endswith(TMP_SUFFIX):
                if self._stale_temp(path, name, now):
                    report.temps += self._unlink(path)
            elif day and rel not in kept:
                report.orphans += self._unlink(path)
        for day_dir in {self.dir / d for d, _n in self._files() if d} | self._day_dirs():
            with contextlib.suppress(OSError):
                day_dir.rmdir()  # only succeeds when empty

    def _day_dirs(self) -> set[Path]:
        try:
            return {Path(e.path) for e in os.scandir(self.dir) if e.is_dir(follow_symlinks=False)}
        except OSError:
            return set()

    def _stale_temp(self, path: Path, name: str, now: int) -> bool:
        if name in _IN_FLIGHT:
            return False
        parts = name.split(".")
        pid = int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else -1
        if pid != os.getpid() and pid > 0 and atomic.pid_alive(pid):
            try:
                return now - path.stat().st_mtime * 1000 > TEMP_GRACE_MS
            except OSError:
                return False
        return True

    @staticmethod
    def _unlink(path: Path) -> int:
        try:
            path.unlink()
        except FileNotFoundError:
            return 0
        except OSError:
            return 0
        return 1

    def _rewrite_index(self, keep: list[RefRecord]) -> None:
        body = "".join(json.dumps(r.to_json(), separators=(",", ":")) + "\n" for r in keep).encode()
        temp = self.dir / f"{INDEX}.{os.getpid()}{TMP_SUFFIX}"
        fd = _open_temp_replacing(temp)
        try:
            atomic.write_all(fd, body)
            atomic.fsync(fd)
        finally:
            os.close(fd)
        try:
            atomic.replace(temp, self.dir / INDEX)
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()


def _open_temp_replacing(path: Path) -> int:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return atomic.open_temp(path)


def open_store(clock: Clock = system_clock) -> RefStore:
    from qdsl.envelope.settings import io_settings, state_dir

    settings = io_settings()
    return RefStore(
        state_dir(),
        ttl_ms=settings.ttl_ms,
        max_count=settings.max_count,
        max_bytes=settings.max_bytes,
        clock=clock,
    )


def collect_at_start() -> None:
    """The lazy GC run at the start of every command; never fails the command."""
    import sys

    try:
        report = open_store().gc()
    except Exception as exc:  # a broken store must not stop an unrelated command
        sys.stderr.write(f"qdsl: warning: ref store cleanup skipped ({type(exc).__name__})\n")
        return
    for warning in report.warnings:
        sys.stderr.write(f"qdsl: warning: {warning}\n")
