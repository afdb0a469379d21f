"""`qdsl compile` and `qdsl run` end to end through the CLI."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.facts.demo.data import T1_A_SHARE

A_SHARE = 'existence project where market_theme ~= "{}"'


def _ok(args: list[str]) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--json", *args])
    assert result.exit_code == 0, (result.output, result.stderr)
    envelope: dict[str, Any] = json.loads(result.stdout)
    assert envelope["ok"] is True
    return envelope["data"]


def test_compile_prints_sql_and_params_without_a_database() -> None:
    data = _ok(
        ["compile", "--dialect", "sqlite", "--tenant", "t1", "--plan", A_SHARE.format("A股")]
    )
    assert data["template"] == "project.existence" and data["dialect"] == "sqlite"
    main = data["statements"][0]
    assert main["role"] == "main" and "semantic_facts" in main["sql"]
    assert main["params"]["tenant_id"] == "t1"
    assert "a-share" in main["params"]["f0"]
    assert "A股" not in main["sql"]


def test_compile_not_covered_exits_4() -> None:
    result = CliRunner().invoke(cli, ["--json", "compile", "--plan", "diagnose project"])
    assert result.exit_code == 4
    assert json.loads(result.stderr)["error"]["type"] == "not_covered"


def test_run_done_when(sqlite_url: str) -> None:
    def run(tenant: str, value: str) -> dict[str, Any]:
        data = _ok(["--db", sqlite_url, "run", "--tenant", tenant, "--plan", A_SHARE.format(value)])
        result: dict[str, Any] = data["result"]
        return result

    t1 = run("t1", "A股")
    assert {r["entity_id"] for r in t1["rows"]} == T1_A_SHARE
    facts = [e for e in t1["evidence"] if e["kind"] == "fact"]
    assert facts and all(e["id"].startswith("fact:") and e["source_ref"] for e in facts)
    assert run("t2", "A股")["rows"] == []
    assert {r["entity_id"] for r in run("t1", "A-share")["rows"]} == T1_A_SHARE


def test_run_uses_the_embedded_demo_database_by_default() -> None:
    data = _ok(["run", "--tenant", "t1", "--plan", "count project"])
    assert data["result"]["count"] == 14
    assert data["now"].startswith("2026-11-01")  # the demo clock on the demo database


def test_run_refuses_another_tenants_scope(sqlite_url: str) -> None:
    plan = json.dumps(
        {"query_type": "count", "entity_type": "project", "scope": {"tenant_id": "t2"}}
    )
    result = CliRunner().invoke(
        cli, ["--json", "--db", sqlite_url, "run", "--tenant", "t1", "--plan", plan]
    )
    assert result.exit_code == 6
    assert json.loads(result.stderr)["error"]["subtype"] == "tenant_scope_mismatch"
