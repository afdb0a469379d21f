"""The real `qdsl` console script: stdout holds nothing but the envelope, the
file-input policy speaks on stderr only, large results round-trip via refs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qdsl.envelope.store import RefStore

QDSL = str(Path(sys.executable).with_name("qdsl"))
PLAN = 'count project where status = "active"'


def run(
    args: list[str], state: Path, *, env: dict[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    full_env["QDSL_STATE_DIR"] = str(state)
    full_env.update(env or {})
    return subprocess.run(
        [QDSL, *args], input=stdin, capture_output=True, env=full_env, timeout=60, check=False
    )


def only_envelope(stdout: bytes) -> dict[str, Any]:
    assert not stdout.startswith(b"\xef\xbb\xbf")
    assert stdout.endswith(b"\n") and stdout.count(b"\n") == 1, stdout[:300]
    env = json.loads(stdout)
    assert isinstance(env, dict) and env["schemaVersion"] == 1
    return env


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.txt"
    path.write_bytes(b"\xef\xbb\xbf" + PLAN.encode())
    return path


def test_json_stdout_is_one_envelope_without_bom(state: Path) -> None:
    proc = run(["--json", "parse", "--plan", "\ufeff" + PLAN], state)
    assert proc.returncode == 0, proc.stderr
    env = only_envelope(proc.stdout)
    assert env["ok"] is True and env["data"]["query_type"] == "count"
    assert proc.stderr == b""


def test_bom_dropped_on_stdin(state: Path) -> None:
    proc = run(["--json", "parse", "--input", "-"], state, stdin=b"\xef\xbb\xbf" + PLAN.encode())
    assert proc.returncode == 0, proc.stderr
    assert only_envelope(proc.stdout)["data"]["entity_type"] == "project"


def test_warn_policy_line_goes_to_stderr_only(state: Path, plan_file: Path) -> None:
    proc = run(["--json", "parse", "--input", str(plan_file)], state)
    assert proc.returncode == 0, proc.stderr
    env = only_envelope(proc.stdout)
    assert not any("file" in w for w in env["warnings"])
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "file-input policy warn" in lines[0]
    assert "--input - <" in lines[0]


def test_deny_policy_exits_6_with_the_inline_command(state: Path, plan_file: Path) -> None:
    proc = run(
        ["--json", "parse", "--input", str(plan_file)], state, env={"QDSL_FILE_INPUT": "deny"}
    )
    assert proc.returncode == 6
    assert proc.stdout == b""
    err = json.loads(proc.stderr)["error"]
    assert err["code"] == "policy/file_input_denied" and err["retryable"] is False
    assert "qdsl --json parse --input - <" in err["hint"]


def test_policy_precedence_flag_over_env_over_config(state: Path, plan_file: Path) -> None:
    state.mkdir(parents=True)
    (state / "config.toml").write_text('[io]\nfile_input = "deny"\n')
    assert run(["--json", "parse", "--input", str(plan_file)], state).returncode == 6
    allowed = run(
        ["--json", "parse", "--input", str(plan_file)], state, env={"QDSL_FILE_INPUT": "allow"}
    )
    assert allowed.returncode == 0 and allowed.stderr == b""
    flagged = run(
        ["--json", "parse", "--input", str(plan_file), "--no-file-input"],
        state,
        env={"QDSL_FILE_INPUT": "allow"},
    )
    assert flagged.returncode == 6


def _big_ref(state: Path, n: int = 800) -> tuple[str, dict[str, Any]]:
    items = [{"id": str(i), "title": f"项目 {i} " + "x" * 30, "status": "active"} for i in range(n)]
    env = {
        "schemaVersion": 1,
        "ok": True,
        "operation": "run",
        "data": {"answer_contract": "entity_list", "answer": {"items": items, "total": n}},
        "warnings": [],
        "meta": {"traceId": "t", "next": []},
    }
    store = RefStore(state, ttl_ms=600_000, max_count=50, max_bytes=10**9)
    return store.put("run", json.dumps(env).encode()).ref_id, env


def test_large_result_prints_refid_first_within_budget_and_reads_back(state: Path) -> None:
    ref, original = _big_ref(state)
    proc = run(["--json", "refs", "get", ref, "data"], state)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) <= 24576
    env = only_envelope(proc.stdout)
    assert next(iter(env)) == "refId" and env["resultPersisted"] is True
    assert str(state) not in proc.stdout.decode()
    new_ref = env["refId"]
    assert any(n["argv"][:4] == ["qdsl", "--json", "refs", "get"] for n in env["meta"]["next"])

    first = run(["--json", "refs", "get", new_ref, "data.value.answer.items[0]"], state)
    value = only_envelope(first.stdout)["data"]["value"]
    assert value == original["data"]["answer"]["items"][0]


def test_input_ref_pick_as_feeds_the_next_command(state: Path) -> None:
    store = RefStore(state, ttl_ms=600_000, max_count=50, max_bytes=10**9)
    env = {"ok": True, "data": {"plan": PLAN, "items": [{"id": "active"}]}}
    ref = store.put("run", json.dumps(env).encode()).ref_id
    as_plan = run(["--json", "parse", "--input-ref", ref, "--pick", "data.plan"], state)
    assert only_envelope(as_plan.stdout)["data"]["query_type"] == "count"
    filled = run(
        [
            "--json",
            "parse",
            "--input-ref",
            ref,
            "--pick",
            "data.items[0].id",
            "--pick-as",
            "st",
            "--plan",
            "count project where status = $st",
        ],
        state,
    )
    data = only_envelope(filled.stdout)["data"]
    assert data["filters"][0]["value"] == "active"


def test_ref_errors_exit_7(state: Path) -> None:
    proc = run(["--json", "refs", "get", "r20200101T000000000-run-0123456789", "data"], state)
    assert proc.returncode == 7
    assert json.loads(proc.stderr)["error"]["code"] == "ref/ref_expired"
    proc = run(["--json", "refs", "show", "nonsense"], state)
    assert proc.returncode == 7
    assert json.loads(proc.stderr)["error"]["code"] == "ref/ref_not_found"


def test_refs_path_is_the_only_absolute_path(state: Path) -> None:
    _big_ref(state)
    listed = run(["--json", "refs", "list"], state)
    assert str(state) not in listed.stdout.decode()
    path = only_envelope(run(["--json", "refs", "path"], state).stdout)
    assert path["data"]["refsDir"] == str(state / "refs")


def test_chain_runs_steps_and_prints_the_last(state: Path) -> None:
    steps = [
        {"op": "parse", "input": {"plan": PLAN}},
        {"op": "fmt", "input": {"plan": "$.steps[0].data"}},
    ]
    proc = run(["--json", "chain", "--steps", json.dumps(steps)], state)
    assert proc.returncode == 0, proc.stderr
    env = only_envelope(proc.stdout)
    assert env["operation"] == "chain"
    assert "count project" in env["data"]["text"]
