"""Previews keep the shape (lists stay lists, the rendered answer stays whole when
the budget allows) and say what they cut beside the data."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

from qdsl.envelope.compact import LEVELS, compact, compact_with_cuts
from qdsl.envelope.emit import emit_error, emit_success
from qdsl.envelope.next_ops import first_list_path, status_of_first_item
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefStore

LIM = LEVELS[3]  # 5 items, 100 chars


def test_scalars_keys_and_short_lists_are_kept() -> None:
    value = {"a": 1, "b": None, "c": [1, 2], "d": "short"}
    assert compact(value, LIM) == value


def test_cut_list_stays_a_list_and_long_strings_say_how_much_is_missing() -> None:
    out, cuts = compact_with_cuts({"xs": list(range(100)), "s": "é" * 500}, LIM, path="data")
    assert out["xs"] == [0, 1, 2, 3, 4]
    assert cuts == [{"path": "data.xs", "total": 100, "shown": 5}]
    assert out["s"].startswith("é" * 100) and out["s"].endswith("…[+400 chars]")


def test_records_stay_records() -> None:
    rows = [{"id": str(i), "title": f"t{i}"} for i in range(50)]
    out, cuts = compact_with_cuts({"answer": {"items": rows, "total": 50}}, LIM, path="data")
    assert out["answer"]["items"] == rows[:5]
    assert out["answer"]["total"] == 50
    assert cuts == [{"path": "data.answer.items", "total": 50, "shown": 5}]


def test_deep_nesting_keeps_types_and_names() -> None:
    deep: Any = [1, 2]
    for _ in range(20):
        deep = {"k": deep}
    out, cuts = compact_with_cuts({"a-b": deep}, LIM, path="data")
    node = out["a-b"]
    while node:
        assert isinstance(node, dict) and list(node) == ["k"]
        node = node["k"]
    assert node == {} and len(cuts) == 1 and cuts[0]["path"].startswith('data."a-b".k.k')


def test_an_object_over_the_key_cap_keeps_its_first_keys() -> None:
    wide = {f"k{i}": i for i in range(100)}
    out, cuts = compact_with_cuts(wide, LIM, path="data")
    assert list(out) == [f"k{i}" for i in range(LIM.keys)]
    assert cuts == [{"path": "data", "total": 100, "shown": LIM.keys}]


def _answer_envelope(n: int, text_len: int) -> dict[str, Any]:
    items = [{"id": str(i), "title": f"item {i} " + "x" * 60, "status": "active"} for i in range(n)]
    return {
        "status": "answered",
        "query_type": "list",
        "answer_contract": "entity_list",
        "text": "共有 " + "项目 " * (text_len // 3),
        "answer": {"items": items, "total": n, "truncated": False},
    }


def test_the_rendered_answer_stays_whole_and_the_list_a_list(tmp_path: Any) -> None:
    """Issue 11: `data.text` was cut from 430 to 213 characters with 10 KB of
    budget left, and `items` became {$count, $shown, ids, labels}."""
    store = RefStore(tmp_path, ttl_ms=60_000, max_count=5, max_bytes=10**9)
    data = _answer_envelope(800, 430)
    out = io.StringIO()
    emit_success("run", data, out=out, store=store, settings=IoSettings(threshold=24576))
    env = json.loads(out.getvalue())
    assert env["resultPersisted"] is True
    assert env["data"]["text"] == data["text"] and len(data["text"]) > 430
    items = env["data"]["answer"]["items"]
    assert isinstance(items, list) and items == data["answer"]["items"][: len(items)]
    assert env["data"]["answer"]["total"] == 800
    assert {"path": "data.answer.items", "total": 800, "shown": len(items)} in env["meta"][
        "preview"
    ]["cuts"]


def test_a_long_text_is_kept_whole_at_the_cost_of_the_rest(tmp_path: Any) -> None:
    store = RefStore(tmp_path, ttl_ms=60_000, max_count=5, max_bytes=10**9)
    data = _answer_envelope(800, 5000)  # about 10 KB of text
    out = io.StringIO()
    emit_success("run", data, out=out, store=store, settings=IoSettings(threshold=16384))
    env = json.loads(out.getvalue())
    assert len(out.getvalue().encode()) <= 16384
    assert env["data"]["text"] == data["text"]
    small = io.StringIO()  # no room for it: shortened, never dropped
    emit_success("run", data, out=small, store=store, settings=IoSettings(threshold=4096))
    text = json.loads(small.getvalue())["data"]["text"]
    assert text.startswith(data["text"][:20]) and text.endswith("chars]")


def test_minimal_envelope_when_no_level_fits(tmp_path: Any) -> None:
    store = RefStore(tmp_path, ttl_ms=1000, max_count=5, max_bytes=10**9)
    data = {f"k{i}": {f"j{j}": "v" * 30 for j in range(10)} for i in range(400)}
    out = io.StringIO()
    emit_success("run", data, out=out, store=store, settings=IoSettings(threshold=1024))
    assert len(out.getvalue().encode()) <= 1024
    env = json.loads(out.getvalue())
    assert env["data"] is None and env["resultPersisted"] is True


def test_newest_ref_over_byte_cap_is_kept_with_a_warning(tmp_path: Any) -> None:
    store = RefStore(tmp_path, ttl_ms=60_000, max_count=5, max_bytes=2000, grace_ms=0)
    old = store.put("run", b"o" * 500)
    out = io.StringIO()
    data = {"items": [{"id": str(i), "v": "x" * 50} for i in range(100)]}
    emit_success("run", data, out=out, store=store, settings=IoSettings(threshold=4096))
    env = json.loads(out.getvalue())
    assert any("over the ref store's byte cap" in w for w in env["warnings"])
    assert [r.ref_id for r in store.records()] == [env["refId"]]
    assert old.ref_id not in {r.ref_id for r in store.records()}


def test_human_mode_is_budgeted_too(tmp_path: Any) -> None:
    store = RefStore(tmp_path, ttl_ms=1000, max_count=5, max_bytes=10**9)
    out = io.StringIO()
    emit_success(
        "run",
        {"x": 1},
        human="line\n" * 5000,
        json_mode=False,
        out=out,
        store=store,
        settings=IoSettings(threshold=2048),
    )
    assert len(out.getvalue().encode()) <= 2048
    assert "stored as ref r" in out.getvalue()


def test_huge_error_envelopes_are_compacted(capsys: Any, monkeypatch: Any) -> None:
    from qdsl.dsl.errors import PlanError

    monkeypatch.setenv("QDSL_REF_THRESHOLD", "2048")
    err = PlanError("x", "m" * 10_000, hint="h", details={"big": list(range(5000))})
    assert emit_error("parse", err) == 3
    printed = capsys.readouterr().err
    assert len(printed.encode()) <= 2048
    assert json.loads(printed)["error"]["code"] == "validation/x"


def test_next_op_helpers() -> None:
    assert first_list_path({"answer": {"items": [1, 2]}}) == "data.answer.items[0]"
    assert first_list_path({"a-b": [1, 2]}) == 'data."a-b"[0]'
    ops = status_of_first_item([{"id": 64}], "project", "t1")
    assert ops[0]["input"]["plan"]["filters"][0]["value"] == "64"
    assert ops[0]["argv"][:5] == ["qdsl", "--json", "run", "--tenant", "t1"]
    no_ops: Callable[..., Any] = status_of_first_item
    assert no_ops([], "project", None) == []
