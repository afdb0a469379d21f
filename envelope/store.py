"""The ref store: large results kept privately for a while (docs/envelopes.md).

Layout under `<state dir>/refs/`: `<YYYY-MM-DD>/<refId>.json` is one ref, a
header line (its sealed record: tenant, expiry, size, sha256) followed by the
stored bytes, the full envelope exactly as it would have been printed;
`index.jsonl` repeats the records, one line each, and is derived.

The ref files are the truth and nothing takes a lock (no `fcntl`, no lock
file), so one code path serves POSIX and Windows hosts:

* a write goes to a temp file in its day's directory, is fsynced and renamed
  into place, so a ref file is whole or absent; its index line is appended
  afterwards in one write, and losing it loses nothing:
* listing and collecting scan the day directories: a file without an index
  line is known by its header, an index line without a file is dropped, and
  the collector rewrites the index (temp file + rename) from what it found;
* a read opens the one file and checks seal, tenant, expiry and sha256, so it
  returns the stored bytes or a typed error, never other bytes;
* a delete is an unlink; one that fails (a file in use on Windows) is retried
  by the next collection;
* the collector never evicts a ref younger than the grace period, so a result
  printed `resultPersisted: true` is there when its caller reads it, however
  many processes write at once.

A ref made for a tenant is readable only with that tenant; to anyone else it
is missing, with the very error a missing ref gives, so ids cannot be probed.
Every file is opened without following symlinks, and every directory is the
user's own, mode 0700 (`private_dir`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from qdsl.dsl.errors import QdslError, RefError
from qdsl.envelope import atomic
from qdsl.envelope.collect import IN_FLIGHT, INDEX, TMP_SUFFIX, collect
from qdsl.envelope.private_dir import UnsafeDirectory, ensure_child, ensure_root
from qdsl.envelope.records import (
    REF_ID,
    Clock,
    RefRecord,
    day_of,
    decode_header,
    encode_header,
    index_line,
    is_ref_id,
    iso_ms,
    new_ref_id,
    parse_iso_ms,
    ref_id_time_ms,
    system_clock,
)
from qdsl.envelope.ref_api import (
    DerivedReads,
    GcReport,
    PruneOwner,
    RefStoreProtocol,
    StoreWriteError,
    Tenants,
    checked_id,
    corrupt,
    expired,
    missing,
    new_record,
)
from qdsl.envelope.scan import Scan, scan_store
from qdsl.envelope.settings import DEFAULT_GRACE_MS

# ids and records live in envelope.records, the backend API in envelope.ref_api;
# re-exported for callers
__all__ = ["REF_ID", "Clock", "GcReport", "RefRecord", "RefStore", "StoreWriteError"]
__all__ += ["RefStoreProtocol", "collect_at_start", "is_ref_id", "iso_ms", "new_ref_id"]
__all__ += ["open_store", "parse_iso_ms", "ref_id_time_ms", "system_clock"]


class RefStore(DerivedReads):
    """The file store: the CLI's default backend."""

    def __init__(
        self,
        state_root: Path,
        *,
        ttl_ms: int,
        max_count: int,
        max_bytes: int,
        grace_ms: int = DEFAULT_GRACE_MS,
        clock: Clock = system_clock,
        tenant_max_count: int | None = None,
        tenant_max_bytes: int | None = None,
    ) -> None:
        self.root = state_root
        self.dir = state_root / "refs"
        self.ttl_ms = ttl_ms
        self.max_count = max_count
        self.max_bytes = max_bytes
        # each tenant's caps (None: the store's)
        self.tenant_max_count = max_count if tenant_max_count is None else tenant_max_count
        self.tenant_max_bytes = max_bytes if tenant_max_bytes is None else tenant_max_bytes
        self.grace_ms = grace_ms
        self.clock = clock

    # ----------------------------------------------------------------- write
    def put(self, operation: str, payload: bytes, *, tenant: str | None = None) -> RefRecord:
        record = new_record(
            operation, payload, now_ms=self.clock(), ttl_ms=self.ttl_ms, tenant=tenant
        )
        ref_id = record.ref_id
        final = self.dir / record.relpath
        temp = final.with_name(f".{ref_id}.{os.getpid()}{TMP_SUFFIX}")
        IN_FLIGHT.add(temp.name)
        try:
            fd = self._open_temp(temp)
            try:
                atomic.write_all(fd, encode_header(record))
                atomic.write_all(fd, payload)
                atomic.fsync(fd)
            finally:
                os.close(fd)
            atomic.replace(temp, final)
        except UnsafeDirectory as exc:
            raise StoreWriteError(str(exc)) from exc
        except OSError as exc:
            # strerror only: str(exc) would carry the absolute path of the store.
            raise StoreWriteError(exc.strerror or type(exc).__name__) from exc
        finally:
            with contextlib.suppress(OSError):
                atomic.unlink(temp)
            IN_FLIGHT.discard(temp.name)
        atomic.fsync_dir(final.parent)
        # The file is the ref; its index line only saves the next scan a read.
        with contextlib.suppress(OSError):
            atomic.append_line(self.dir / INDEX, index_line(record))
        return record

    def _open_temp(self, temp: Path) -> int:
        for attempt in range(3):
            self._secure(create=True, day_dir=temp.parent)
            try:
                return atomic.open_temp(temp)
            except FileNotFoundError:
                # A collector removed the (then empty) day directory between
                # our mkdir and open: make it again.
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _secure(self, *, create: bool, day_dir: Path | None = None) -> bool:
        """The store's directories, private; False if they do not exist."""
        if not ensure_root(self.root, create=create):
            return False
        if not ensure_child(self.dir, "the refs directory", create=create):
            return False
        if day_dir is not None:
            return ensure_child(day_dir, f"refs/{day_dir.name}", create=create)
        return True

    # ------------------------------------------------------------------ read
    def load(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, bytes]:
        """The record and stored bytes of a ref readable by `tenant`."""
        ref_id = checked_id(ref_id)
        day_dir = self.dir / day_of(ref_id)

        def screen(head: bytes) -> None:
            # Another tenant's ref is refused on its header, before its bytes are read.
            with contextlib.suppress(ValueError):
                record, _start = decode_header(head)
                if record.ref_id == ref_id and not record.readable_by(tenant):
                    raise self._missing(ref_id)

        data = self._read_ref_file(ref_id, day_dir, screen)
        try:
            record, start = decode_header(data)
        except ValueError:
            raise corrupt(ref_id) from None
        if record.ref_id != ref_id:
            raise corrupt(ref_id)
        if not record.readable_by(tenant):
            raise self._missing(ref_id)
        if record.expires_ms <= self.clock():
            raise expired(ref_id)
        body = data[start:]
        import hashlib  # OpenSSL: loaded when a ref is read, not by every start

        if len(body) != record.bytes or hashlib.sha256(body).hexdigest() != record.sha256:
            raise corrupt(ref_id)
        return record, body

    def _read_ref_file(self, ref_id: str, day_dir: Path, screen: Callable[[bytes], None]) -> bytes:
        try:
            if not self._secure(create=False, day_dir=day_dir):
                raise self._missing(ref_id)
            return atomic.read_file(day_dir / f"{ref_id}.json", screen=screen)
        except UnsafeDirectory as exc:
            raise _unsafe(str(exc)) from None
        except (FileNotFoundError, NotADirectoryError):
            raise self._missing(ref_id) from None
        except atomic.SymlinkRefused:
            raise _unsafe(f"ref {ref_id} is not a regular file") from None
        except OSError as exc:
            raise RefError(
                "ref_unreadable",
                f"cannot read ref {ref_id}: {exc.strerror}",
                hint="check the permissions of the state dir (`qdsl refs path`)",
                retryable=True,
            ) from None

    def _missing(self, ref_id: str) -> RefError:
        return missing(ref_id, ttl_ms=self.ttl_ms, now_ms=self.clock())

    # --------------------------------------------------------------- listing
    def records(self) -> list[RefRecord]:
        """Every ref in the store (expired too), oldest first."""
        return self.scan().records

    def live(self, *, tenant: str | None = None) -> list[RefRecord]:
        """The unexpired refs `tenant` may read, oldest first."""
        try:
            if not self._secure(create=False):
                return []
        except UnsafeDirectory as exc:
            raise _unsafe(str(exc)) from None
        now = self.clock()
        return [r for r in self.records() if r.expires_ms > now and r.readable_by(tenant)]

    def scan(self) -> Scan:
        """What the store holds: its ref files, known by index line or header."""
        return scan_store(self.dir)

    # -------------------------------------------------------------- collect
    def gc(
        self,
        *,
        prune_before_ms: int | None = None,
        prune_all: bool = False,
        prune_tenant: PruneOwner = Tenants.EVERY,
    ) -> GcReport:
        """Drop expired refs, then the oldest over the caps (see `collect`), every
        tenant's alike. An explicit prune (`prune_all`, `prune_before_ms`) removes
        only `prune_tenant`'s refs (None: those made without a tenant)."""
        report = GcReport()
        try:
            if not os.path.isdir(self.root) or not self._secure(create=False):
                return report
            collect(
                self,
                report,
                prune_before_ms=prune_before_ms,
                prune_all=prune_all,
                prune_tenant=prune_tenant,
            )
        except (UnsafeDirectory, OSError) as exc:
            reason = str(exc) if isinstance(exc, UnsafeDirectory) else exc.strerror
            report.warnings.append(f"ref store cleanup skipped ({reason or type(exc).__name__})")
        return report


def _unsafe(message: str) -> RefError:
    return RefError(
        "ref_store_unsafe",
        f"the ref store refuses to read: {message}",
        hint="the state dir and its refs directories must be real directories of your own, "
        "mode 0700; fix or remove them (`qdsl refs path` shows where)",
        retryable=False,
    )


def open_store(clock: Clock = system_clock) -> RefStoreProtocol:
    """The selected backend (`QDSL_REF_STORE`), configured by the `[io]` settings."""
    from qdsl.envelope.backends import open_selected

    return open_selected(clock)


def collect_at_start() -> None:
    """The start of every command: the state dir made (parents too) private,
    then the lazy GC of the selected store; never fails the command."""
    import sys

    try:
        # First, so that whatever the command keeps there (the demo database,
        # keys) finds a private dir rather than making one with open parents.
        from qdsl.envelope.settings import state_dir

        with contextlib.suppress(UnsafeDirectory, OSError):
            ensure_root(state_dir(), create=True)
        report = open_store().gc()
    except Exception as exc:  # a broken store must not stop an unrelated command
        reason = exc.message if isinstance(exc, QdslError) else type(exc).__name__
        sys.stderr.write(f"qdsl: warning: ref store cleanup skipped ({reason})\n")
        return
    for warning in report.warnings:
        sys.stderr.write(f"qdsl: warning: {warning}\n")
