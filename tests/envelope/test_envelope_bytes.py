"""What a large result prints and stores, byte for byte, pinned.

Speed work on the envelope path (encoding, hashing, storing, the preview) must
not change a byte: for three generated results over the budget (a 1.5 MB one
with CJK, astral characters, escapes, int keys and tuples; one with NaN and
infinities, the sanitized path; one with lone surrogates, the escaped path),
the stored envelope, its size, its sha256, the refId and the printed preview
are what the code printed before that work (digests taken then).
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Any

import pytest

from qdsl.envelope.emit import emit_success
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefStore

NOW_MS = 1_764_590_400_123
REF_ID = "r20251201T120000123-run-2a2a2a2a2a"
# name: (stored bytes, sha256 of the stored bytes, sha256 of the printed bytes, printed bytes)
PINNED = {
    "big": (
        1564500,
        "d0f3035b96081244ee167cc3e355091f9e436c2f0c696497c8e622e0befb1a94",
        "1e2c8bf6f5f72c605cf09bcedde5fc4628b7da977cef19a3aa0ed96edf92fb78",
        18668,
    ),
    "nan": (
        132356,
        "20e8b34a2cd1932d61ad777f9c546e0afee6b30fadaac1ecab1b5f30b48f572b",
        "150f9001e9b6f35b953b9544565e5551d022e0d172c7a4f212f79433fcb8d840",
        1980,
    ),
    "lone": (
        65035,
        "eeea0848531eb52f9dde04e671277373bd05c8c75ff884a48bf99ea3d37531d7",
        "3887b62890a5f3d8a10c11867b1db381355ce3a4e8b3e2b3a4b2cb8af6a5bd7f",
        2340,
    ),
}


def _result(name: str) -> Any:
    if name == "nan":
        values = [float("nan"), float("inf"), -float("inf"), 1.5] * 4000
        return {"values": values, "name": "ñ" * 100}
    if name == "lone":
        return {"items": ["ok \ud800 lone " + str(i) for i in range(3000)]}
    rows = [
        {
            "id": str(i),
            "title": f'项目 {i} "quoted" back\\slash tab\t nl\n 😀 é',
            "budget": i * 1.25,
            "n": i,
            "ok": i % 3 == 0,
            "none": None,
            "tags": ["a", "b", str(i % 7)],
            (i % 5): "int key",
            "t": (1, "x"),
        }
        for i in range(9000)
    ]
    return {
        "answer_contract": "entity_list",
        "text": "总计 " + "字" * 3000,
        "answer": {"items": rows, "total": len(rows)},
    }


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_large_result_prints_and_stores_the_pinned_bytes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RefStore(
        tmp_path, ttl_ms=600_000, max_count=50, max_bytes=10**9, clock=lambda: NOW_MS
    )
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(os, "urandom", lambda n: b"\x2a" * n)  # the refId's random part
    emit_success(
        "run", _result(name), store=store, settings=IoSettings(), trace_id="t" * 32,
        out=out, tenant="t1",
    )
    monkeypatch.undo()
    out.flush()
    printed = out.buffer.getvalue()  # type: ignore[attr-defined]
    (record,) = store.records()
    stored = store.read_bytes(record.ref_id, tenant="t1")
    size, stored_sha, printed_sha, printed_size = PINNED[name]
    assert record.ref_id == REF_ID
    assert (len(stored), hashlib.sha256(stored).hexdigest()) == (size, stored_sha)
    assert (record.bytes, record.sha256) == (size, stored_sha)
    assert (len(printed), hashlib.sha256(printed).hexdigest()) == (printed_size, printed_sha)
