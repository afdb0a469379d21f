"""How an audit line is rendered and where it lands.

`render` takes a fast path when every field is whitelisted and plain; it must
write exactly what the field-by-field cleaning writes. The line's encoder (no
circular-reference check) must encode as `json.dumps` does. The file sink follows a rotation
by another process and a deleted file, and keeps every line.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from qdsl import audit_line
from qdsl.audit import ALLOWED_KEYS, RotatingFileSink, read_tail


class Kind(enum.StrEnum):
    A = "a"


def _cleaned_line(stage: str, trace_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    """What the field-by-field rule keeps: whitelisted keys, scalars and lists
    (or tuples) of scalars, anything else dropped and named."""
    scalars = (str, int, float, bool, type(None))
    event: dict[str, Any] = {
        "timestamp": "T", "event": f"qdsl.{stage}", "trace_id": trace_id, "stage": stage,
    }
    dropped = []
    for key, value in fields.items():
        if key in ALLOWED_KEYS and isinstance(value, scalars):
            event[key] = value
        elif (
            key in ALLOWED_KEYS
            and isinstance(value, list | tuple)
            and all(isinstance(v, scalars) for v in value)
        ):
            event[key] = list(value)
        else:
            dropped.append(key)
    if dropped:
        event["dropped"] = sorted(dropped)
    return event


scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
    st.just(Kind.A),
)
value = st.one_of(
    scalar,
    st.lists(scalar, max_size=3),
    st.tuples(scalar),
    st.dictionaries(st.text(max_size=3), scalar, max_size=2),
    st.lists(st.lists(scalar, max_size=2), min_size=1, max_size=2),
)
key = st.one_of(st.sampled_from(sorted(ALLOWED_KEYS)), st.text(max_size=6))


@given(st.dictionaries(key, value, max_size=8), st.sampled_from(["result", "plan"]), st.text())
def test_a_line_holds_exactly_what_cleaning_keeps(
    fields: dict[str, Any], stage: str, trace_id: str
) -> None:
    line = audit_line.render(stage, trace_id, fields)
    event = json.loads(line)
    assert event.pop("timestamp")
    expected = _cleaned_line(stage, trace_id, fields)
    expected.pop("timestamp")
    assert event == json.loads(json.dumps(expected))
    assert list(event) == list(json.loads(json.dumps(expected)))  # same order too


json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(),
)


@given(st.dictionaries(st.text(), st.one_of(json_scalar, st.lists(json_scalar)), max_size=6))
def test_the_line_encoder_encodes_as_json_does(obj: dict[str, Any]) -> None:
    assert audit_line._encode(obj) == json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _numbers(path: Path) -> list[int]:
    return [int(e["n"]) for e in read_tail(path, 10_000)]


def test_a_rotation_by_another_writer_is_followed_and_nothing_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    ours = RotatingFileSink(path, max_bytes=300, keep=9)
    theirs = RotatingFileSink(path, max_bytes=300, keep=9)  # another process's sink
    n = 0
    for _ in range(12):
        for sink in (theirs, theirs, ours):
            sink.write(json.dumps({"n": n, "pad": "x" * 30}))
            n += 1
    files = sorted(tmp_path.glob("a.jsonl*"))
    assert len([f for f in files if not f.name.endswith(".lock")]) > 3  # it rotated
    kept = [
        json.loads(line)["n"]
        for f in files
        if not f.name.endswith(".lock")
        for line in f.read_text().splitlines()
    ]
    assert sorted(kept) == list(range(n))  # every line is somewhere, once
    # each writer lands in the current file within one line of the other's rotation
    assert all(f.stat().st_size <= 300 + 2 * 60 for f in files)


def test_a_deleted_file_is_made_again_before_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    sink = RotatingFileSink(path, recheck_s=3600)
    sink.write(json.dumps({"n": 0}))
    path.unlink()
    sink.write(json.dumps({"n": 1}))
    assert _numbers(path) == [1]


def test_a_file_renamed_by_hand_is_followed_after_the_recheck(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    moved = tmp_path / "moved.jsonl"
    sink = RotatingFileSink(path, recheck_s=3600)
    sink.write(json.dumps({"n": 0}))
    path.rename(moved)
    sink.write(json.dumps({"n": 1}))  # within the window: the renamed file, kept
    assert _numbers(moved) == [0, 1]
    sink.recheck_s = 0
    sink.write(json.dumps({"n": 2}))
    assert _numbers(path) == [2] and _numbers(moved) == [0, 1]
