"""The ref store: large results kept privately for a while (SPEC 9).

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

import calendar
import contextlib
import functools
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dsl.errors import RefError

Clock = Callable[[], int]  # epoch milliseconds

INDEX = "index.jsonl"
LOCK = ".lock"
TMP_SUFFIX = ".tmp"
# A temp file of a live process younger than this may be a write in flight.
TEMP_GRACE_MS = 10 * 60 * 1000
REF_ID = re.compile(r"r(\d{8})T(\d{9})-([a-z0-9_]{1,24})-([0-9a-f]{10})\Z")

_IN_FLIGHT: set[str] = set()  # temp names this process is writing now


def system_clock() -> int:
    return time.time_ns() // 1_000_000


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso_ms(text: str) -> int:
    if len(text) == 24 and text[10] == "T" and text[19] == "." and text[23] == "Z":
        # Our own format: the index holds thousands of these, parse them cheaply.
        return (
            _day_ms(text[:10])
            + int(text[11:13]) * 3_600_000
            + int(text[14:16]) * 60_000
            + int(text[17:19]) * 1000
            + int(text[20:23])
        )
    return round(datetime.fromisoformat(text).timestamp() * 1000)


@functools.lru_cache(maxsize=512)
def _day_ms(day: str) -> int:
    return calendar.timegm((int(day[:4]), int(day[5:7]), int(day[8:10]), 0, 0, 0, 0, 0, 0)) * 1000


def new_ref_id(operation: str, now_ms: int) -> str:
    stamp = datetime.fromtimestamp(now_ms / 1000, UTC)
    slug = re.sub(r"[^a-z0-9]+", "_", operation.lower()).strip("_")[:24] or "op"
    ms = now_ms % 1000
    return f"r{stamp:%Y%m%dT%H%M%S}{ms:03d}-{slug}-{secrets.token_hex(5)}"


def ref_id_time_ms(ref_id: str) -> int | None:
    m = REF_ID.match(ref_id)
    if m is None:
        return None
    day, clock = m.group(1), m.group(2)
    stamp = datetime.strptime(day + clock[:6], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return int(stamp.timestamp()) * 1000 + int(clock[6:])


@dataclass(frozen=True)
class RefRecord:
    ref_id: str
    operation: str
    created_ms: int
    expires_ms: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "refId": self.ref_id,
            "operation": self.operation,
            "createdAt": iso_ms(self.created_ms),
            "expiresAt": iso_ms(self.expires_ms),
            "bytes": self.bytes,
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RefRecord:
        return cls(
            ref_id=str(doc["refId"]),
            operation=str(doc["operation"]),
            created_ms=parse_iso_ms(str(doc["createdAt"])),
            expires_ms=parse_iso_ms(str(doc["expiresAt"])),
            bytes=int(doc["bytes"]),
            sha256=str(doc["sha256"]),
        )

    @property
    def relpath(self) -> str:
        day = self.ref_id[1:9]
        return f"{day[:4]}-{day[4:6]}-{day[6:]}/{self.ref_id}.json"


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


# Write steps as module functions so fault-injection tests can replace each.
def _open_temp(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync(fd: int) -> None:
    os.fsync(fd)


def _replace(src: Path, dst: Path) -> None:
    os.replace(src, dst)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


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
            fd = _open_temp(temp)
            try:
                _write_all(fd, payload)
                _fsync(fd)
            finally:
                os.close(fd)
            line = (json.dumps(record.to_json(), separators=(",", ":")) + "\n").encode()
            with self._locked():
                _replace(temp, final)
                try:
                    self._append_index(line)
                except BaseException:
                    with contextlib.suppress(OSError):
                        final.unlink()
                    raise
            _fsync_dir(final.parent)
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
            _write_all(fd, line)
            _fsync(fd)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: single-process use only
            yield
            return
        fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

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
        if len(keep) != len(records):
            self._rewrite_index(keep)
        kept = {r.relpath for r in keep}
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
        if pid != os.getpid() and pid > 0 and _pid_alive(pid):
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
            _write_all(fd, body)
            _fsync(fd)
        finally:
            os.close(fd)
        try:
            _replace(temp, self.dir / INDEX)
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()


def _open_temp_replacing(path: Path) -> int:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return _open_temp(path)


def open_store(clock: Clock = system_clock) -> RefStore:
    from envelope.settings import io_settings, state_dir

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
