"""`qdsl eval CASES` through the CLI: table, envelope, exit codes, on two deployments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from deployments.fixtures import TICKETS_CATALOG

from qdsl.cli.main import cli

DEMO_CASES = """
[defaults]
tenant = "t1"

[[case]]
id = "total"
question = "现在有多少个项目"
expect = { contract = "count_scalar", count = 14 }

[[case]]
id = "vague"
question = "嗯"
expect = { status = "clarify" }

[[case]]
id = "protocol"
question = "确认"
expect = { status = "gated" }
"""


def _write(tmp_path: Path, text: str, name: str = "cases.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _eval(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_all_right_exits_zero_with_a_table(sqlite_url: str, tmp_path: Path) -> None:
    res = _eval("--db", sqlite_url, "eval", "--show", "all", str(_write(tmp_path, DEMO_CASES)))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "3 cases: 3 right (100.0%), 0 safe, 0 wrong"
    assert "c=0: +1.000, c=10: +1.000, c=N: +1.000" in lines[1]
    header = ["verdict", "case", "tenant", "question", "status", "text", "that", "left", "why"]
    assert lines[2].split() == header
    first = ["right", "total", "t1", "现在有多少个项目", "answered", "共有", "14", "个项目。"]
    assert lines[3].split() == first
    assert lines[5].split()[:5] == ["right", "protocol", "t1", "确认", "gated"]


def test_a_wrong_case_exits_five_and_the_envelope_says_why(sqlite_url: str, tmp_path: Path) -> None:
    cases = DEMO_CASES.replace("count = 14", "count = 999")
    res = _eval("--json", "--db", sqlite_url, "eval", str(_write(tmp_path, cases)))
    assert res.exit_code == 5
    envelope = json.loads(res.stdout)
    assert envelope["ok"] is True and envelope["operation"] == "eval"
    data = envelope["data"]
    assert (data["cases"], data["right"], data["safe"], data["wrong"]) == (3, 2, 0, 1)
    assert data["reliability"] == {"c=0": 0.6667, "c=10": -2.6667, "c=N": -0.3333}
    wrong = [r for r in data["results"] if r["verdict"] == "wrong"]
    assert [(r["id"], r["reasons"]) for r in wrong] == [("total", ["count 14, expected 999"])]


def test_by_default_only_the_cases_not_right_are_listed(sqlite_url: str, tmp_path: Path) -> None:
    # issue 23: on a terminal the whole table went to the ref store, the summary's
    # point (which cases are not right) cut from a preview
    cases = DEMO_CASES.replace("count = 14", "count = 999")
    res = _eval("--db", sqlite_url, "eval", str(_write(tmp_path, cases)))
    assert res.exit_code == 5
    lines = res.stdout.splitlines()
    assert lines[0] == "3 cases: 2 right (66.7%), 0 safe, 1 wrong"
    rows = [line.split()[:2] for line in lines[3:-1] if line.strip()]
    assert rows == [["wrong", "total"]]
    assert lines[-1] == "(2 other cases not listed: --show all lists every case)"
    as_json = _eval("--json", "--db", sqlite_url, "eval", str(_write(tmp_path, cases)))
    assert len(json.loads(as_json.stdout)["data"]["results"]) == 3


def test_show_wrong_lists_only_the_wrong_cases(sqlite_url: str, tmp_path: Path) -> None:
    cases = DEMO_CASES.replace("count = 14", "count = 999")
    res = _eval("--db", sqlite_url, "eval", "--show", "wrong", str(_write(tmp_path, cases)))
    assert res.exit_code == 5
    lines = res.stdout.splitlines()[3:]
    rows = [line.split()[:2] for line in lines if line.strip() and not line.startswith("(")]
    assert rows == [["wrong", "total"]]


def test_a_bad_case_file_is_a_usage_error(tmp_path: Path) -> None:
    path = _write(tmp_path, '[[case]]\nquestion = "q"\n')
    res = _eval("--json", "eval", str(path))
    assert res.exit_code == 2
    error = json.loads(res.stderr)["error"]
    assert error["code"] == "usage/invalid_cases"
    assert any("tenant" in p for p in error["details"]["problems"])


def test_cases_run_against_another_deployment(
    tickets_sqlite_url: str, tickets_rows: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    lines = [
        {"id": "acme", "question": "How many tickets are there?", "tenant": "acme"},
        {"id": "globex", "question": "有多少个工单", "tenant": "globex"},
    ]
    path = _write(tmp_path, "\n".join(json.dumps(x) for x in lines), "cases.jsonl")
    res = _eval(
        "--json",
        "--db",
        tickets_sqlite_url,
        "--catalog",
        str(TICKETS_CATALOG),
        "eval",
        "--now",
        "2026-06-15T12:00:00Z",
        str(path),
    )
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["data"]["results"]
    acme, globex = (
        sum(t["tenant_id"] == case["tenant"] for t in tickets_rows["tickets"]) for case in lines
    )
    assert [r["text"] for r in results] == [f"There are {acme} tickets.", f"共有 {globex} 个工单。"]


def test_eval_links_names_only_the_tenant_data_knows(
    tickets_sqlite_url: str, tickets_rows: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    # a requester of acme's only: linked for acme, unknown (never linked) for globex
    acme = {t["requester"] for t in tickets_rows["tickets"] if t["tenant_id"] == "acme"}
    globex = {t["requester"] for t in tickets_rows["tickets"] if t["tenant_id"] == "globex"}
    name = sorted(n for n in acme - globex if n.isascii())[0]
    count = sum(t["requester"] == name for t in tickets_rows["tickets"] if t["tenant_id"] == "acme")
    question = f"{name} 提交的工单有多少个"
    cases = [
        {"id": "mine", "question": question, "tenant": "acme", "expect": {"count": count}},
        {"id": "theirs", "question": question, "tenant": "globex", "expect": {"count": 0}},
    ]
    path = _write(tmp_path, "\n".join(json.dumps(x) for x in cases), "cases.jsonl")
    res = _eval(
        "--json",
        "--db",
        tickets_sqlite_url,
        "--catalog",
        str(TICKETS_CATALOG),
        "eval",
        "--now",
        "2026-06-15T12:00:00Z",
        str(path),
    )
    results = {r["id"]: r for r in json.loads(res.stdout)["data"]["results"]}
    assert results["mine"]["verdict"] == "right", results["mine"]
    assert results["theirs"]["status"] == "clarify", results["theirs"]
    assert name in results["theirs"]["text"]
