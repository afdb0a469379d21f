"""The ref store against a plain dict model: put (for a tenant or none), get
(as a tenant or none), expire (injected clock), GC with count and byte caps
and a grace period, corrupt a byte, lose the index, restart. A read never
returns bytes other than those put under that id, never another tenant's; a
ref the model says is live, intact, readable by the caller and within the
caps (or within its grace period) is always readable."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

from qdsl.dsl.errors import RefError
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
        self.root = Path(tempfile.mkdtemp(prefix="qdsl-sm-"))
        self.clock = Clock()
        self.store = self._open()
        self.model: dict[str, Entry] = {}

    def _open(self) -> RefStore:
        return RefStore(
            self.root,
            ttl_ms=TTL,
            max_count=MAX_COUNT,
            max_bytes=MAX_BYTES,
            grace_ms=GRACE,
            clock=self.clock,
        )

    def _path(self, ref_id: str) -> Path:
        return self.store.dir / f"{ref_id[1:5]}-{ref_id[5:7]}-{ref_id[7:9]}" / f"{ref_id}.json"

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(
        target=refs,
        payload=st.binary(min_size=0, max_size=1500),
        tenant=st.sampled_from(TENANTS),
    )
    def put(self, payload: bytes, tenant: str | None) -> str:
        record = self.store.put("run", payload, tenant=tenant)
        assert record.ref_id not in self.model
        original = self._path(record.ref_id).read_bytes()
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
        # the oldest go first, except the newest and those within the grace period
        excess = len(live) - MAX_COUNT
        total = sum(len(e.payload) for _r, e in live)
        kept = []
        for i, (rid, e) in enumerate(live):
            over = excess > 0 or total > MAX_BYTES
            if over and i < len(live) - 1 and now - e.created >= GRACE:
                excess -= 1
                total -= len(e.payload)
            else:
                kept.append((rid, e))
        self.model = dict(kept)

    @precondition(lambda self: bool(self.model))
    @rule(ref_id=refs, position=st.integers(min_value=0))
    def corrupt_a_byte(self, ref_id: str, position: int) -> None:
        entry = self.model.get(ref_id)
        path = self._path(ref_id)
        if entry is None or not path.exists():
            return
        raw = bytearray(path.read_bytes())
        raw[position % len(raw)] ^= 0x41
        path.write_bytes(bytes(raw))
        entry.corrupt = bytes(raw) != entry.original  # flipping a byte twice restores it

    @rule(ref_id=consumes(refs))
    def delete_file_behind_our_back(self, ref_id: str) -> None:
        path = self._path(ref_id)
        if path.exists():
            path.unlink()
        self.model.pop(ref_id, None)

    @rule()
    def restart(self) -> None:
        self.store = self._open()

    # Not with a corrupt ref about: its header may be unreadable, and without
    # an index line nothing knows its size for the caps until its TTL passes.
    @precondition(lambda self: not any(e.corrupt for e in self.model.values()))
    @rule()
    def lose_the_index(self) -> None:
        (self.store.dir / "index.jsonl").unlink(missing_ok=True)

    @invariant()
    def index_lines_parse(self) -> None:
        index = self.store.dir / "index.jsonl"
        if index.exists():
            for line in index.read_text().splitlines():
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


StoreMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestStoreMachine = StoreMachine.TestCase
