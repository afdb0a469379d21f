"""For results of any JSON shape and size, the printed envelope parses, fits the
budget, leads with refId when persisted, and the stored result is the original;
the preview has the result's shape (a list stays a list of its first items,
its count in `meta.preview.cuts`), and the rendered answer `data.text` stays
whole whenever the budget has room for it."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdsl.envelope.compact import jmes_child
from qdsl.envelope.emit import emit_success, success_envelope
from qdsl.envelope.encode import dumps
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefStore

REF_FIELDS = [
    "refId",
    "resultPersisted",
    "outputBytes",
    "sha256",
    "expiresAt",
    "previewTruncated",
    "largeOutputNotice",
    "degraded",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    # huge strings, including multi-byte characters
    | st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", "é", "港", "😀", '"', "\\"]),
        st.integers(0, 20_000),
    )
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=30)
        | st.dictionaries(st.text(max_size=12), children, max_size=12)
        # long, flat lists and lists of records
        | st.builds(lambda x, n: [x] * n, children, st.integers(0, 200))
        | st.builds(
            lambda n, w: [{"id": str(i), "title": "t" * w, "n": i} for i in range(n)],
            st.integers(0, 600),
            st.integers(0, 80),
        )
    ),
    max_leaves=40,
).filter(lambda v: _json_bytes_bound(v) <= MAX_RESULT_BYTES)

# `[x] * n` nests shared references: 200 copies of 200 copies of a 20,000-character
# string is tiny in memory and 800 MB of JSON (one draw reached 24 GB and was
# OOM-killed). Results are real JSON documents, so bound what they print to.
MAX_RESULT_BYTES = 40_000_000


def _json_bytes_bound(value: Any, memo: dict[int, int] | None = None) -> int:
    """An upper bound of the UTF-8 JSON size, without materializing shared parts."""
    memo = {} if memo is None else memo
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, str):
        size = 6 * len(value) + 2  # worst case: every character escaped as \uXXXX
    elif isinstance(value, list):
        size = 2 + sum(_json_bytes_bound(v, memo) + 1 for v in value)
    elif isinstance(value, dict):
        size = 2 + sum(6 * len(k) + 4 + _json_bytes_bound(v, memo) for k, v in value.items())
    else:
        size = 32
    memo[key] = size
    return size


texts = st.text(max_size=400) | st.builds(
    lambda c, n: c * n, st.sampled_from(["a", "港", "😀", "\n"]), st.integers(0, 3000)
)
# results with a rendered answer first, as ask and run print them
answers = st.builds(
    lambda text, rest: {
        "text": text,
        **({k: v for k, v in rest.items() if k != "text"} if isinstance(rest, dict) else {}),
        **({} if isinstance(rest, dict) else {"answer": rest}),
    },
    texts,
    json_values,
)
# Room the tightest level needs besides the text: ref fields, suggestions and
# the rest of a result of at most 40 leaves.
SLACK = 8192


def assert_same_shape(orig: Any, shown: Any, path: str, cuts: dict[str, tuple[int, int]]) -> None:
    if isinstance(orig, dict):
        assert isinstance(shown, dict), path
        assert len(shown) <= len(orig), path
        for (key, value), (shown_key, shown_value) in zip(
            orig.items(), shown.items(), strict=False
        ):
            assert shown_key == key, path  # the first keys, in order (keys here are short)
            assert_same_shape(value, shown_value, jmes_child(path, key), cuts)
        if len(shown) < len(orig) and path in cuts:
            assert cuts[path] == (len(orig), len(shown)), path
    elif isinstance(orig, list):
        assert isinstance(shown, list), path  # a list stays a list
        assert len(shown) <= len(orig), path
        if len(shown) < len(orig) and path in cuts:
            assert cuts[path] == (len(orig), len(shown)), path
        for i, (value, shown_value) in enumerate(zip(orig, shown, strict=False)):
            assert_same_shape(value, shown_value, f"{path}[{i}]", cuts)
    elif isinstance(orig, str):
        assert isinstance(shown, str), path
        if shown != orig:
            head, _, tail = shown.rpartition("…[+")
            assert orig.startswith(head) and tail == f"{len(orig) - len(head)} chars]", path
    else:
        assert shown == orig, path


def emit(data: Any, store: RefStore, threshold: int, warnings: list[str]) -> str:
    out = io.StringIO()
    emit_success(
        "run",
        data,
        warnings=warnings,
        trace_id="trace",
        out=out,
        store=store,
        settings=IoSettings(threshold=threshold),
    )
    return out.getvalue()


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=json_values | answers,
    threshold=st.sampled_from([1024, 2000, 4096, 24576]),
    warnings=st.lists(st.text(max_size=300), max_size=40),
)
def test_printed_envelope_parses_fits_and_keeps_the_result(
    tmp_path: Path, data: Any, threshold: int, warnings: list[str]
) -> None:
    store = RefStore(tmp_path, ttl_ms=600_000, max_count=10_000, max_bytes=10**10)
    printed = emit(data, store, threshold, warnings)
    assert printed.endswith("\n") and printed.count("\n") == 1
    assert not printed.startswith("\ufeff")
    assert len(printed.encode("utf-8")) <= threshold
    env = json.loads(printed)
    full = success_envelope("run", data, warnings=warnings, trace_id="trace")
    full_text = dumps(full) + "\n"
    if len(full_text.encode("utf-8")) <= threshold:
        assert env == full
        return
    assert list(env)[: len(REF_FIELDS)] == REF_FIELDS
    assert env["resultPersisted"] is True and env["degraded"] is False
    assert env["ok"] is True and env["operation"] == "run"
    stored = store.read_bytes(env["refId"])
    assert hashlib.sha256(stored).hexdigest() == env["sha256"]
    assert len(stored) == env["outputBytes"]
    assert stored == full_text.encode("utf-8")
    assert json.loads(stored) == full
    assert str(tmp_path) not in printed

    if env["data"] is not None:  # not the minimal envelope
        cuts = {c["path"]: (c["total"], c["shown"]) for c in env["meta"]["preview"]["cuts"]}
        assert_same_shape(json.loads(dumps(data)), env["data"], "data", cuts)
    if isinstance(data, dict) and isinstance(data.get("text"), str):
        room = len(dumps(data["text"]).encode()) + SLACK <= threshold
        if room:
            assert env["data"]["text"] == data["text"]


def test_non_finite_floats_still_print_strict_json(tmp_path: Path) -> None:
    store = RefStore(tmp_path, ttl_ms=1000, max_count=5, max_bytes=10**6)
    printed = emit({"x": float("nan"), "y": [float("inf")]}, store, 24576, [])
    env = json.loads(printed, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert env["data"] == {"x": "NaN", "y": ["Infinity"]}


def test_lone_surrogates_are_escaped_not_fatal(tmp_path: Path) -> None:
    store = RefStore(tmp_path, ttl_ms=1000, max_count=5, max_bytes=10**6)
    printed = emit({"s": "a\ud800b"}, store, 24576, [])
    assert json.loads(printed)["data"]["s"] == "a\ud800b"
