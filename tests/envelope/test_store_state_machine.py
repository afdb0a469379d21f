"""The ref store against a plain dict model: put, get, expire (injected clock),
GC with count and byte caps, corrupt a byte, restart. A read never returns
bytes other than those put under that id; a ref the model says is live,
intact and within the caps is always readable."""

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
MAX_COUNT = 6
MAX_BYTES = 4_000


@dataclass
class Entry:
    payload: bytes
    created: int
    expires: int
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
            self.root, ttl_ms=TTL, max_count=MAX_COUNT, max_bytes=MAX_BYTES, clock=self.clock
        )

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(target=refs, payload=st.binary(min_size=0, max_size=1500))
    def put(self, payload: bytes) -> str:
        record = self.store.put("run", payload)
        assert record.ref_id not in self.model
        self.model[record.ref_id] = Entry(payload, self.clock.now, self.clock.now + TTL)
        return record.ref_id

    @rule(ref_id=refs)
    def get(self, ref_id: str) -> None:
        entry = self.model.get(ref_id)
        try:
            data = self.store.read_bytes(ref_id)
        except RefError as exc:
            if entry is None:
                assert exc.subtype in {"ref_not_found", "ref_expired"}
            elif entry.expires <= self.clock.now:
                assert exc.subtype == "ref_expired"
            else:
                assert entry.corrupt and exc.subtype == "ref_corrupt", exc.subtype
            return
        assert entry is not None, "read a ref the model dropped"
        assert not entry.corrupt and entry.expires > self.clock.now
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
        live = live[-MAX_COUNT:]
        while len(live) > 1 and sum(len(e.payload) for _r, e in live) > MAX_BYTES:
            live.pop(0)
        self.model = dict(live)

    @precondition(lambda self: bool(self.model))
    @rule(ref_id=refs, position=st.integers(min_value=0))
    def corrupt_a_byte(self, ref_id: str, position: int) -> None:
        entry = self.model.get(ref_id)
        path = self.store.dir / f"{ref_id[1:5]}-{ref_id[5:7]}-{ref_id[7:9]}" / f"{ref_id}.json"
        if entry is None or not entry.payload or not path.exists():
            return
        raw = bytearray(path.read_bytes())
        raw[position % len(raw)] ^= 0x41
        path.write_bytes(bytes(raw))
        entry.corrupt = bytes(raw) != entry.payload  # flipping a byte twice restores it

    @rule(ref_id=consumes(refs))
    def delete_file_behind_our_back(self, ref_id: str) -> None:
        path = self.store.dir / f"{ref_id[1:5]}-{ref_id[5:7]}-{ref_id[7:9]}" / f"{ref_id}.json"
        if path.exists():
            path.unlink()
        self.model.pop(ref_id, None)

    @rule()
    def restart(self) -> None:
        self.store = self._open()

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
                }

    @invariant()
    def model_refs_are_indexed(self) -> None:
        indexed = {r.ref_id for r in self.store.records()}
        assert set(self.model) <= indexed


StoreMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestStoreMachine = StoreMachine.TestCase
