"""What every ref store backend offers, and the read-side rules they share.

Two backends keep refs (docs/refs.md): the file store (`envelope.store`, the
CLI's default) and the PostgreSQL store (`envelope.pg_store`, for several
server processes serving one deployment). Callers hold a `RefStoreProtocol`
from `open_store()` and never learn which one it is: ids, error types
(`ref/ref_not_found`, `ref/ref_expired`, `ref/ref_corrupt`), tenant rules and
the records they return are the same on both.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Protocol

from qdsl.dsl.errors import RefError
from qdsl.envelope.records import Clock, RefRecord, is_ref_id, new_ref_id, ref_id_time_ms


class Tenants(Enum):
    """Whose refs an explicit prune removes when no one tenant is named."""

    EVERY = "every"


# An explicit prune's owner: a tenant id, None (the refs made without a tenant)
# or Tenants.EVERY (every ref: the store's operator, never a CLI caller).
PruneOwner = str | None | Tenants


class GcReport:
    """What a collection did; counted as it goes. (A plain class: `dataclasses`
    would be the heaviest import of every command's start-up.)"""

    def __init__(self) -> None:
        self.pruned = 0  # removed by an explicit prune (also counted in `evicted`)
        self.expired = 0
        self.evicted = 0
        self.vanished = 0
        self.orphans = 0
        self.temps = 0
        self.failed = 0  # refs to drop that could not be removed (a read-only dir): kept
        self.unpruned = 0  # of those, refs an explicit prune asked for
        self.warnings: list[str] = []

    def __repr__(self) -> str:
        return f"GcReport({vars(self)})"


class StoreWriteError(Exception):
    """Persisting failed; the caller degrades (resultPersisted: false)."""


class RefStoreProtocol(Protocol):
    """A ref store: what `open_store()` returns, whichever backend is selected."""

    ttl_ms: int
    max_count: int
    max_bytes: int
    tenant_max_count: int
    tenant_max_bytes: int
    grace_ms: int
    clock: Clock

    def put(self, operation: str, payload: bytes, *, tenant: str | None = None) -> RefRecord: ...

    def load(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, bytes]: ...

    def load_json(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, Any]: ...

    def record(self, ref_id: str, *, tenant: str | None = None) -> RefRecord: ...

    def read_bytes(self, ref_id: str, *, tenant: str | None = None) -> bytes: ...

    def read_json(self, ref_id: str, *, tenant: str | None = None) -> Any: ...

    def records(self) -> list[RefRecord]: ...

    def live(self, *, tenant: str | None = None) -> list[RefRecord]: ...

    def gc(
        self,
        *,
        prune_before_ms: int | None = None,
        prune_all: bool = False,
        prune_tenant: PruneOwner = Tenants.EVERY,
    ) -> GcReport: ...


class DerivedReads:
    """The reads every backend derives from its own `load`."""

    def load(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, bytes]:
        raise NotImplementedError

    def record(self, ref_id: str, *, tenant: str | None = None) -> RefRecord:
        return self.load(ref_id, tenant=tenant)[0]

    def read_bytes(self, ref_id: str, *, tenant: str | None = None) -> bytes:
        return self.load(ref_id, tenant=tenant)[1]

    def read_json(self, ref_id: str, *, tenant: str | None = None) -> Any:
        return self.load_json(ref_id, tenant=tenant)[1]

    def load_json(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, Any]:
        record, data = self.load(ref_id, tenant=tenant)
        try:
            return record, json.loads(data)
        except (ValueError, RecursionError):
            raise RefError(
                "ref_corrupt", f"ref {record.ref_id} is not JSON", hint="rerun the command"
            ) from None


def new_record(
    operation: str, payload: bytes, *, now_ms: int, ttl_ms: int, tenant: str | None
) -> RefRecord:
    """The record of a ref about to be written: a fresh id, its lifetime and its
    payload's size and sha256 (one rule for every backend)."""
    import hashlib  # OpenSSL: loaded by the commands that store a ref, not by every start

    return RefRecord(
        ref_id=new_ref_id(operation, now_ms),
        operation=operation,
        created_ms=now_ms,
        expires_ms=now_ms + ttl_ms,
        bytes=len(payload),
        sha256=hashlib.sha256(payload).hexdigest(),
        tenant=tenant,
    )


def checked_id(ref_id: str) -> str:
    """`ref_id` stripped, or `ref_not_found` for anything that is not a ref id."""
    ref_id = ref_id.strip()
    if not is_ref_id(ref_id):
        shown = ref_id if len(ref_id) <= 80 else ref_id[:80] + "…"
        raise RefError(
            "ref_not_found",
            f"{shown!r} is not a ref id",
            hint="ref ids look like r20261101T120000123-run-0123456789; see `qdsl refs list`",
        )
    return ref_id


def missing(ref_id: str, *, ttl_ms: int, now_ms: int) -> RefError:
    """The error of a ref that is not there, or not there for this caller: its
    id's age alone decides between not found and expired, so ids cannot be probed."""
    born = ref_id_time_ms(ref_id)
    if born is not None and born + ttl_ms <= now_ms:
        return expired(ref_id)
    return RefError(
        "ref_not_found",
        f"no ref {ref_id} in the store",
        hint="it may have been pruned or evicted by the count/size caps; "
        "rerun the command that produced it (see `qdsl refs list`)",
    )


def corrupt(ref_id: str) -> RefError:
    return RefError(
        "ref_corrupt",
        f"ref {ref_id} does not match its sha256; it was changed after writing",
        hint="rerun the command that produced it; the damaged ref is collected when its "
        "TTL ends (`qdsl refs prune --all --tenant T` removes a tenant's refs at once)",
    )


def expired(ref_id: str) -> RefError:
    return RefError(
        "ref_expired",
        f"ref {ref_id} has expired",
        hint="rerun the command that produced it (QDSL_REF_TTL_MS sets the lifetime)",
    )


def prunes(record: RefRecord, owner: PruneOwner) -> bool:
    """Whether an explicit prune for `owner` may remove `record`."""
    return owner is Tenants.EVERY or record.tenant == owner


def plan_eviction(
    live: list[RefRecord],
    *,
    now: int,
    max_count: int,
    max_bytes: int,
    grace_ms: int,
    tenant_max_count: int | None = None,
    tenant_max_bytes: int | None = None,
) -> set[str]:
    """The ids the caps evict from `live` (unexpired, oldest first).

    First each tenant's caps (the refs made without a tenant count as one
    more tenant): a tenant over them loses its own oldest refs. Then the
    store's: while it is over them, the tenant holding the most (bytes when
    over the byte cap, refs when over the count cap) loses its oldest ref, so
    one tenant's large results never evict another's smaller holding. A ref
    younger than the grace period is never evicted; a tenant's caps never
    evict its newest ref, the store's never the store's newest (which stays
    even alone over the byte cap).
    """
    if not live:
        return set()
    newest = live[-1].ref_id
    owned: dict[str | None, list[RefRecord]] = {}
    for r in live:
        owned.setdefault(r.tenant, []).append(r)
    evict: set[str] = set()
    count_cap = max(max_count if tenant_max_count is None else tenant_max_count, 1)
    bytes_cap = max_bytes if tenant_max_bytes is None else tenant_max_bytes
    for refs in owned.values():
        count, total = len(refs), sum(r.bytes for r in refs)
        for r in refs[:-1]:
            if count <= count_cap and total <= bytes_cap:
                break
            if now - r.created_ms >= grace_ms:
                evict.add(r.ref_id)
                count, total = count - 1, total - r.bytes
    kept = {t: [r for r in refs if r.ref_id not in evict] for t, refs in owned.items()}
    # each tenant's refs the store's caps may evict, oldest first
    candidates = {
        t: [r for r in refs if r.ref_id != newest and now - r.created_ms >= grace_ms]
        for t, refs in kept.items()
    }
    return evict | _largest_first(kept, candidates, max(max_count, 1), max_bytes)


def _largest_first(
    kept: dict[str | None, list[RefRecord]],
    candidates: dict[str | None, list[RefRecord]],
    max_count: int,
    max_bytes: int,
) -> set[str]:
    """While the store is over a cap, the largest holder's oldest candidate."""
    evict: set[str] = set()
    count = sum(len(refs) for refs in kept.values())
    total = sum(r.bytes for refs in kept.values() for r in refs)
    held = {t: (len(refs), sum(r.bytes for r in refs)) for t, refs in kept.items()}
    while count > max_count or total > max_bytes:
        by_bytes = total > max_bytes
        holders = [t for t, c in candidates.items() if c]
        if not holders:
            break
        victim = max(
            holders,
            key=lambda t: (held[t][1] if by_bytes else held[t][0], -candidates[t][0].created_ms),
        )
        r = candidates[victim].pop(0)
        evict.add(r.ref_id)
        count, total = count - 1, total - r.bytes
        held[victim] = (held[victim][0] - 1, held[victim][1] - r.bytes)
    return evict


# What an envelope adds around a value read from a ref (`refs get`): its
# fields, the expression (escaped), the ref's id and sha256.
_ENVELOPE_ROOM = 64 * 1024


def result_room(store: RefStoreProtocol) -> int:
    """The most bytes a value read from `store` may print as, so that its
    envelope, stored for the same tenant when over the output budget, stays
    within the store's byte caps (the store's and the tenant's)."""
    return max(min(store.max_bytes, store.tenant_max_bytes) - _ENVELOPE_ROOM, 0)


def over_cap_warning(record: RefRecord, max_bytes: int) -> str:
    return (
        f"ref {record.ref_id} ({record.bytes} bytes) is over the ref store's byte cap "
        f"({max_bytes}); it is kept alone until the next result"
    )
