"""The ref store against a plain dict model: put (for a tenant or none), get
(as a tenant or none), expire (injected clock), GC with count and byte caps
and a grace period, corrupt a byte, lose the index, restart. A read never
returns bytes other than those put under that id, never another tenant's; a
ref the model says is live, intact, readable by the caller and within the
caps (or within its grace period) is always readable.

The same machine runs on both backends: the file store, and the PostgreSQL
store (there a corrupted byte is flipped in the row's payload or checksum, a
ref deleted behind the store's back is a row deleted by the superuser, and
there is no index to lose)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import Engine, LargeBinary, bindparam, text

from qdsl.dsl.errors import RefError
from qdsl.envelope.ref_api import RefStoreProtocol
from qdsl.envelope.store import RefStore

TTL = 10_000
GRACE = 1_500
MAX_COUNT = 6
MAX_BYTES = 4_000
TENANTS = (None, "t1", "t2")


@dataclass
class Entry:
    payload: bytes
    created: int
    expires: int
    tenant: str | None
    original: bytes  # the file as written
    corrupt: bool = False


class Clock:
    def __init__(self) -> None:
        self.now = 1_795_000_000_000

    def __call__(self) -> int:
        return self.now


class StoreMachine(RuleBasedStateMachine):
    refs = Bundle("refs")

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.setup_backend()
        self.store = self._open()
        self.model: dict[str, Entry] = {}

    # -- the file store (FileStoreMachine below is the PostgreSQL one) ------------
    def setup_backend(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="qdsl-sm-"))

    def _open(self) -> RefStoreProtocol:
        return RefStore(
            self.root,
            ttl_ms=TTL,
            max_count=MAX_COUNT,
            max_bytes=MAX_BYTES,
            grace_ms=GRACE,
            clock=self.clock,
        )

    def _path(self, ref_id: str) -> Path:
        return self.root / "refs" / f"{ref_id[1:5]}-{ref_id[5:7]}-{ref_id[7:9]}" / f"{ref_id}.json"

    def stored(self, ref_id: str) -> bytes | None:
        """What the backend holds for the ref, byte for byte; None if gone."""
        path = self._path(ref_id)
        return path.read_bytes() if path.exists() else None

    def overwrite(self, ref_id: str, raw: bytes) -> None:
        self._path(ref_id).write_bytes(raw)

    def remove(self, ref_id: str) -> None:
        self._path(ref_id).unlink(missing_ok=True)

    def index_lines(self) -> list[str]:
        index = self.root / "refs" / "index.jsonl"
        return index.read_text().splitlines() if index.exists() else []

    def lose_index(self) -> None:
        (self.root / "refs" / "index.jsonl").unlink(missing_ok=True)

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(
        target=refs,
        payload=st.binary(min_size=0, max_size=1500),
        tenant=st.sampled_from(TENANTS),
    )
    def put(self, payload: bytes, tenant: str | None) -> str:
        # Refs made in the same millisecond are ordered by their random ids, so
        # which one the caps evict (and what the model holds afterwards) would
        # differ between Hypothesis's replays of one example: every ref gets an
        # instant of its own.
        self.clock.now += 1
        record = self.store.put("run", payload, tenant=tenant)
        assert record.ref_id not in self.model
        original = self.stored(record.ref_id)
        assert original is not None
        now = self.clock.now
        self.model[record.ref_id] = Entry(payload, now, now + TTL, tenant, original)
        return record.ref_id

    @rule(ref_id=refs, caller=st.sampled_from(TENANTS))
    def get(self, ref_id: str, caller: str | None) -> None:
        entry = self.model.get(ref_id)
        try:
            data = self.store.read_bytes(ref_id, tenant=caller)
        except RefError as exc:
            if entry is None:
                assert exc.subtype in {"ref_not_found", "ref_expired"}
            elif entry.corrupt:
                # a changed byte may hit the header (tenant, expiry): never a read
                assert exc.subtype in {"ref_corrupt", "ref_not_found", "ref_expired"}
            elif entry.tenant not in (None, caller):
                # exactly what a missing ref of that age gives
                old = entry.created + TTL <= self.clock.now
                assert exc.subtype == ("ref_expired" if old else "ref_not_found")
            elif entry.expires <= self.clock.now:
                assert exc.subtype == "ref_expired"
            else:
                raise AssertionError(f"live ref unreadable: {exc.subtype}") from exc
            return
        assert entry is not None, "read a ref the model dropped"
        assert not entry.corrupt and entry.expires > self.clock.now
        assert entry.tenant in (None, caller), "read another tenant's ref"
        assert data == entry.payload

    @rule(ref_id=refs)
    def get_unknown_random_id(self, ref_id: str) -> None:
        bogus = ref_id[:-10] + "0123456789"
        if bogus in self.model:
            return
        try:
            self.store.read_bytes(bogus)
        except RefError as exc:
            assert exc.subtype in {"ref_not_found", "ref_expired"}
        else:
            raise AssertionError("read a ref that was never written")

    @rule(ms=st.integers(min_value=1, max_value=TTL))
    def advance_clock(self, ms: int) -> None:
        self.clock.now += ms

    @rule()
    def gc(self) -> None:
        self.store.gc()
        now = self.clock.now
        live = sorted(
            ((rid, e) for rid, e in self.model.items() if e.expires > now),
            key=lambda item: (item[1].created, item[0]),
        )
        self.model = dict(_kept_by_the_caps(live, now))

    @precondition(lambda self: bool(self.model))
    @rule(ref_id=refs, position=st.integers(min_value=0))
    def corrupt_a_byte(self, ref_id: str, position: int) -> None:
        entry = self.model.get(ref_id)
        held = self.stored(ref_id)
        if entry is None or held is None:
            return
        raw = bytearray(held)
        raw[position % len(raw)] ^= 0x41
        self.overwrite(ref_id, bytes(raw))
        entry.corrupt = bytes(raw) != entry.original  # flipping a byte twice restores it

    @rule(ref_id=consumes(refs))
    def delete_behind_our_back(self, ref_id: str) -> None:
        self.remove(ref_id)
        self.model.pop(ref_id, None)

    @rule()
    def restart(self) -> None:
        self.store = self._open()

    # Not with a corrupt ref about: its header may be unreadable, and without
    # an index line nothing knows its size for the caps until its TTL passes.
    @precondition(lambda self: not any(e.corrupt for e in self.model.values()))
    @rule()
    def lose_the_index(self) -> None:
        self.lose_index()

    @invariant()
    def index_lines_parse(self) -> None:
        for line in self.index_lines():
            assert set(json.loads(line)) == {
                "refId",
                "operation",
                "createdAt",
                "expiresAt",
                "bytes",
                "sha256",
                "tenant",
            }

    @invariant()
    def model_refs_are_listed(self) -> None:
        listed = {r.ref_id: r.tenant for r in self.store.records()}
        intact = {rid: e.tenant for rid, e in self.model.items() if not e.corrupt}
        assert intact.items() <= listed.items()


MACHINE_SETTINGS = settings(max_examples=60, stateful_step_count=40, deadline=None)
StoreMachine.TestCase.settings = MACHINE_SETTINGS
TestStoreMachine = StoreMachine.TestCase


class PgStoreMachine(StoreMachine):
    """The machine on the PostgreSQL store. A row's stored bytes are its
    checksum and payload; the superuser (`admin`) changes or deletes them."""

    engine: Engine
    admin: Engine

    def setup_backend(self) -> None:
        with self.admin.begin() as conn:
            conn.execute(text("TRUNCATE qdsl_refs"))

    def _open(self) -> RefStoreProtocol:
        from qdsl.envelope.pg_store import PgRefStore

        return PgRefStore(
            self.engine,
            ttl_ms=TTL,
            max_count=MAX_COUNT,
            max_bytes=MAX_BYTES,
            grace_ms=GRACE,
            clock=self.clock,
        )

    def stored(self, ref_id: str) -> bytes | None:
        with self.admin.connect() as conn:
            row = conn.execute(
                text("SELECT sha256, payload FROM qdsl_refs WHERE ref_id = :id"), {"id": ref_id}
            ).one_or_none()
        return None if row is None else row.sha256.encode() + bytes(row.payload)

    def overwrite(self, ref_id: str, raw: bytes) -> None:
        sha, payload = raw[:64], raw[64:]  # a sha256 is 64 hex digits
        update = text("UPDATE qdsl_refs SET sha256 = :sha, payload = :payload WHERE ref_id = :id")
        update = update.bindparams(bindparam("payload", type_=LargeBinary))
        with self.admin.begin() as conn:
            conn.execute(update, {"sha": sha.decode("latin-1"), "payload": payload, "id": ref_id})

    def remove(self, ref_id: str) -> None:
        with self.admin.begin() as conn:
            conn.execute(text("DELETE FROM qdsl_refs WHERE ref_id = :id"), {"id": ref_id})

    def index_lines(self) -> list[str]:
        return []

    def lose_index(self) -> None:
        """There is no index: the table is the store."""

    def teardown(self) -> None:
        pass


@pytest.mark.pg
def test_the_machine_on_postgresql(pg_refs_engine: Engine, pg_refs_admin: Engine) -> None:
    class Bound(PgStoreMachine):
        engine = pg_refs_engine
        admin = pg_refs_admin

    factory: Callable[[], StoreMachine] = Bound
    run_state_machine_as_test(factory, settings=MACHINE_SETTINGS)


def _kept_by_the_caps(live: list[tuple[str, Entry]], now: int) -> list[tuple[str, Entry]]:
    """What the caps keep of `live` (oldest first): each tenant within its caps
    (here the store's) by its own oldest, its newest kept; then, while the
    store is over a cap, the largest holder (bytes over the byte cap, refs over
    the count cap; among equals, the one whose oldest is oldest) loses its
    oldest, never the store's newest; nothing within the grace period goes."""
    newest = live[-1][0] if live else None
    tenants = list(dict.fromkeys(e.tenant for _r, e in live))
    evicted: set[str] = set()
    for tenant in tenants:
        mine = [(rid, e) for rid, e in live if e.tenant == tenant]
        count, total = len(mine), sum(len(e.payload) for _r, e in mine)
        for rid, e in mine[:-1]:
            if count <= MAX_COUNT and total <= MAX_BYTES:
                break
            if now - e.created >= GRACE:
                evicted.add(rid)
                count, total = count - 1, total - len(e.payload)
    left = [(rid, e) for rid, e in live if rid not in evicted]
    while True:
        total = sum(len(e.payload) for _r, e in left)
        if len(left) <= MAX_COUNT and total <= MAX_BYTES:
            return left
        by_bytes = total > MAX_BYTES
        movable: dict[str | None, list[tuple[str, Entry]]] = {t: [] for t in tenants}
        held: dict[str | None, int] = dict.fromkeys(tenants, 0)
        for rid, e in left:
            held[e.tenant] += len(e.payload) if by_bytes else 1
            if rid != newest and now - e.created >= GRACE:
                movable[e.tenant].append((rid, e))
        holders = [t for t in tenants if movable[t]]
        if not holders:
            return left
        victim = max(holders, key=lambda t: (held[t], -movable[t][0][1].created))
        gone = movable[victim][0][0]
        left = [(rid, e) for rid, e in left if rid != gone]
