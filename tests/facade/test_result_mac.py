"""`verify` trusts only results `run` printed (issue 13, finding 8).

`qdsl verify` used to trust a caller-supplied result, so a t1 result relabelled
as t2 passed `verify --tenant t2`. `run` now signs its result (HMAC-SHA256,
key in the private state dir) and `verify --result` refuses what fails it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from qdsl.cli.main import cli
from qdsl.dsl.errors import PolicyError, UsageError
from qdsl.result_mac import KEY_FILE, check_result, result_key, sign_result

PLAN = 'existence project where market_theme ~= "A股"'


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--json", *args], input=stdin)


def _run(db: str, tenant: str) -> dict[str, Any]:
    res = invoke(["--db", db, "run", "--tenant", tenant, "--plan", PLAN])
    assert res.exit_code == 0, res.stderr
    envelope: dict[str, Any] = json.loads(res.stdout)
    return envelope


def _answer(envelope: dict[str, Any]) -> str:
    data = envelope["data"]
    return json.dumps(
        {
            "contract": data["answer_contract"],
            "text": data["text"],
            "data": data["answer"],
            "cited_evidence": [e["id"] for e in data["evidence"]],
            "language": "en",
        },
        ensure_ascii=False,
    )


def _verify(db: str, tenant: str, result: Any, answer: str) -> Result:
    args = ["--db", db, "verify", "--tenant", tenant, "--plan", PLAN]
    return invoke([*args, "--result", "-", "--answer", answer], stdin=json.dumps(result))


def _relabel(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {
            k: (new if k == "tenant_id" and v == old else _relabel(v, old, new))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_relabel(v, old, new) for v in node]
    return node


def test_run_signs_and_verify_accepts_its_own_result(sqlite_url: str) -> None:
    envelope = _run(sqlite_url, "t1")
    assert envelope["data"]["result"]["mac"].startswith("hmac-sha256:")
    res = _verify(sqlite_url, "t1", envelope, _answer(envelope))
    assert res.exit_code == 0, res.stderr


def test_a_t1_result_relabelled_as_t2_fails_verify_for_t2(sqlite_url: str) -> None:
    envelope = _run(sqlite_url, "t1")
    forged = _relabel(envelope, "t1", "t2")
    res = _verify(sqlite_url, "t2", forged, _answer(forged))
    assert res.exit_code == 6, res.stderr
    error = json.loads(res.stderr.strip().splitlines()[-1])["error"]
    assert error["type"] == "policy" and error["subtype"] == "untrusted_result"
    # the untouched t1 result is not t2's either
    res = _verify(sqlite_url, "t2", envelope, _answer(envelope))
    assert res.exit_code == 6


def test_an_edited_or_unsigned_result_is_refused(sqlite_url: str) -> None:
    envelope = _run(sqlite_url, "t1")
    result = envelope["data"]["result"]
    edited = {**result, "rows": result["rows"][:1]}
    unsigned = {k: v for k, v in result.items() if k != "mac"}
    for bad in (edited, unsigned, {**result, "mac": "hmac-sha256:" + "0" * 64}):
        res = _verify(sqlite_url, "t1", bad, _answer(envelope))
        assert res.exit_code == 6, res.stderr


def test_without_result_verify_executes_the_plan(sqlite_url: str) -> None:
    envelope = _run(sqlite_url, "t1")
    args = ["--db", sqlite_url, "verify", "--plan", PLAN, "--answer", _answer(envelope)]
    res = invoke([*args, "--tenant", "t1"])
    assert res.exit_code == 0, res.stderr
    # and an answer citing t1's evidence does not pass for t2, whose result has none of it
    res = invoke([*args, "--tenant", "t2"])
    assert res.exit_code == 5, res.stderr


def test_the_key_is_private_and_an_unsafe_key_is_refused(tmp_path: Path) -> None:
    key = result_key(tmp_path)
    path = tmp_path / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) == 32
    assert result_key(tmp_path) == key  # the same key on every use
    signed = {"tenant_id": "t1", "rows": [], "mac": ""}
    signed["mac"] = sign_result("t1", signed, key)
    check_result("t1", signed, key)
    with pytest.raises(PolicyError):
        check_result("t2", signed, key)
    os.chmod(path, 0o644)
    with pytest.raises(UsageError):
        result_key(tmp_path)
    path.unlink()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"k" * 32)
    target.chmod(0o600)
    path.symlink_to(target)
    with pytest.raises(UsageError):
        result_key(tmp_path)
