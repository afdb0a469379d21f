"""The input channels: exactly one, BOM dropped, picks and placeholders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qdsl.cli.inputs import fill_placeholder, read_plan_input
from qdsl.dsl.errors import PolicyError, QdslError, UsageError
from qdsl.envelope.settings import io_settings
from qdsl.envelope.store import open_store


def code_of(**kw: Any) -> str:
    with pytest.raises(QdslError) as info:
        read_plan_input(**kw)
    return info.value.code


def put(doc: Any) -> str:
    return open_store().put("run", json.dumps(doc).encode()).ref_id


def test_exactly_one_channel() -> None:
    assert code_of() == "usage/missing_input"
    assert code_of(plan="count project", input_json="{}") == "usage/conflicting_inputs"
    assert code_of(plan="x", input_ref=put({"data": "x"})) == "usage/conflicting_inputs"
    assert code_of(pick="data") == "usage/pick_without_ref"
    assert code_of(input_ref=put({"data": 1}), pick_as="pid") == "usage/missing_plan_template"


def test_bom_dropped_on_inline_json_and_ref_channels() -> None:
    assert read_plan_input(plan="\ufeffcount project") == ("count project", [])
    assert read_plan_input(input_json='\ufeff{"a": 1}')[0] == '{"a": 1}'
    assert read_plan_input(input_ref=put({"data": "\ufeffcount task"}))[0] == "count task"


def test_input_json_must_be_an_object() -> None:
    assert code_of(input_json="[1]") == "usage/bad_input_json"
    assert code_of(input_json="{nope") == "usage/bad_input_json"


def test_file_channel_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(b"\xef\xbb\xbfcount project")
    monkeypatch.setenv("QDSL_FILE_INPUT", "deny")
    with pytest.raises(PolicyError) as info:
        read_plan_input(input_path=str(path))
    assert info.value.exit_code == 6 and info.value.details["source"] == "QDSL_FILE_INPUT"
    assert read_plan_input(input_path=str(path), file_input=True)[0] == "count project"
    monkeypatch.setenv("QDSL_FILE_INPUT", "sometimes")
    assert code_of(input_path=str(path)) == "usage/bad_setting"
    monkeypatch.delenv("QDSL_FILE_INPUT")
    assert code_of(input_path=str(tmp_path / "missing.txt")) == "usage/input_not_found"


def test_pick_as_plan_object_and_text() -> None:
    ref = put({"data": {"plan": {"query_type": "count"}, "text": "count project"}})
    assert json.loads(read_plan_input(input_ref=ref, pick="data.plan")[0]) == {
        "query_type": "count"
    }
    assert read_plan_input(input_ref=ref, pick="data.text", pick_as="plan")[0] == "count project"
    assert code_of(input_ref=ref, pick="data.nothing") == "usage/pick_empty"
    assert code_of(input_ref=ref, pick="data[") == "usage/bad_expression"
    assert code_of(input_ref=ref, pick="length(data)") == "usage/pick_not_plan"


@pytest.mark.parametrize(
    ("source", "value", "expected"),
    [
        ("status project where id = $pid", "64", 'status project where id = "64"'),
        ('status project where id = "$pid"', "64", 'status project where id = "64"'),
        ("list task where n > $pid", 3, "list task where n > 3"),
        ("x = $pid and y = $pidx", "a", 'x = "a" and y = $pidx'),
    ],
)
def test_text_placeholder(source: str, value: Any, expected: str) -> None:
    assert fill_placeholder(source, "pid", value) == expected


@pytest.mark.parametrize("value", ['6"4) or (1', "a\\b", "a\nb", None, True, [1], {"a": 1}])
def test_text_placeholder_refuses_values_that_could_change_structure(value: Any) -> None:
    with pytest.raises(UsageError):
        fill_placeholder("status project where id = $pid", "pid", value)


def test_json_placeholder_keeps_the_type() -> None:
    src = '{"filters": [{"field": "id", "value": "$pid"}], "note": "$pidx"}'
    filled = json.loads(fill_placeholder(src, "pid", ["1", "2"]))
    assert filled == {"filters": [{"field": "id", "value": ["1", "2"]}], "note": "$pidx"}
    with pytest.raises(UsageError) as info:
        fill_placeholder('{"a": 1}', "pid", 1)
    assert info.value.subtype == "unused_pick"


def test_settings_precedence_env_over_config(monkeypatch: pytest.MonkeyPatch) -> None:
    root = open_store().dir.parent
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(
        "[io]\nresult_threshold = 5000\nref_ttl_ms = 1000\nfile_input = 'allow'\n"
    )
    s = io_settings()
    assert (s.threshold, s.ttl_ms, s.file_input, s.file_input_source) == (
        5000,
        1000,
        "allow",
        "config",
    )
    monkeypatch.setenv("QDSL_REF_THRESHOLD", "10")
    assert io_settings().threshold == 1024  # raised to the minimum that fits a preview
    monkeypatch.setenv("QDSL_REF_THRESHOLD", "0")
    assert io_settings().threshold == 0
    monkeypatch.setenv("QDSL_REF_TTL_MS", "-5")
    with pytest.raises(UsageError):
        io_settings()


def test_ref_store_backend_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from qdsl.envelope.settings import state_dir

    root = state_dir()
    root.mkdir(parents=True, exist_ok=True)
    assert (io_settings().ref_store, io_settings().ref_store_url) == ("file", None)
    (root / "config.toml").write_text(
        "[io]\nref_store = 'PostgreSQL'\nref_store_url = 'postgresql://qdsl@db/refs'\n"
    )
    s = io_settings()
    assert (s.ref_store, s.ref_store_url) == ("postgresql", "postgresql://qdsl@db/refs")
    monkeypatch.setenv("QDSL_REF_STORE", "file")
    monkeypatch.setenv("QDSL_REF_STORE_URL", "postgresql://qdsl@other/refs")
    s = io_settings()
    assert (s.ref_store, s.ref_store_url) == ("file", "postgresql://qdsl@other/refs")
    monkeypatch.setenv("QDSL_REF_STORE", "sqlite")
    with pytest.raises(UsageError) as info:
        io_settings()
    assert info.value.subtype == "bad_setting" and "QDSL_REF_STORE" in info.value.message
    monkeypatch.delenv("QDSL_REF_STORE")
    monkeypatch.delenv("QDSL_REF_STORE_URL")
    (root / "config.toml").write_text("[io]\nref_store_url = 5\n")
    with pytest.raises(UsageError) as info:
        io_settings()
    assert "ref_store_url" in info.value.message
