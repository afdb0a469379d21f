"""Previews keep the shape, cut with counts, fold records, and apply hooks."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

from qdsl.envelope.compact import LEVELS, compact, compact_data
from qdsl.envelope.emit import emit_error, emit_success
from qdsl.envelope.next_ops import first_list_path, status_of_first_item
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefStore

LIM = LEVELS[2]  # 5 items, 100 chars


def test_scalars_keys_and_short_lists_are_kept() -> None:
    value = {"a": 1, "b": None, "c": [1, 2], "d": "short"}
    assert compact(value, LIM) == value


def test_cut_list_keeps_its_count_and_long_strings_say_how_much_is_missing() -> None:
    out = compact({"xs": list(range(100)), "s": "é" * 500}, LIM)
    assert out["xs"] == {"$count": 100, "$shown": 5, "$head": [0, 1, 2, 3, 4]}
    assert out["s"].startswith("é" * 100) and out["s"].endswith("…[+400 chars]")


def test_records_fold_into_columns() -> None:
    rows = [{"id": str(i), "title": f"t{i}"} for i in range(50)] + [{"id": "x", "extra": 1}]
    out = compact(rows, LIM)
    assert out["$count"] == 51 and out["$columns"] == ["id", "title"]
    assert out["$rows"][0] == ["0", "t0"]


def test_deep_nesting_is_summarized() -> None:
    deep: Any = [1, 2]
    for _ in range(20):
        deep = {"k": deep}
    text = json.dumps(compact(deep, LIM))
    assert '"$keys": 1' in text or '"$count": 2' in text


def test_entity_list_hook_indexes_ids_and_labels() -> None:
    items = [{"id": str(i), "title": f"project {i}", "body": "z" * 500} for i in range(300)]
    data = {"answer_contract": "entity_list", "answer": {"items": items, "total": 300}}
    out = compact_data("run", data, LIM)
    index = out["answer"]["items"]
    assert index["$count"] == 300 and index["ids"][:3] == ["0", "1", "2"]
    assert index["labels"][0] == "project 0" and "body" not in json.dumps(index)
    assert out["answer"]["total"] == 300


def test_catalog_hook_gives_the_field_index() -> None:
    data = {
        "source": "demo",
        "entities": {
            "project": {
                "query_types": ["list", "count"],
                "fields": {"status": {"values": ["a"] * 50}, "budget": {}},
            },
        },
    }
    out = compact_data("catalog", data, LIM)
    assert out["entities"]["project"] == {"query_types": "list, count", "fields": "budget, status"}
    tightest = compact_data("catalog", data, LEVELS[-1])
    assert tightest["entities"]["project"]["fields"] == "budget, status"


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
