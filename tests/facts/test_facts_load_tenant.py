"""`facts load --tenant T` loads T's facts only (issue 25, R7).

Without it a load takes whatever tenants its file names. With it a row of any
other tenant is a bad row: the whole file is refused with those lines named,
and nothing is written, on SQLite and PostgreSQL, through the CLI and
`load_facts(..., tenant=...)`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from load_support import cli_load, fact, fresh_url, jsonl, rejected, stored_count

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import UsageError
from qdsl.facts.db import make_engine
from qdsl.facts.load import FactsRejected, load_facts


@pytest.fixture
def url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return fresh_url(dialect, tmp_path, request)


ROWS = [fact("1"), fact("2", tenant_id="t2"), fact("3"), fact("4", tenant_id="t3")]


def test_rows_of_another_tenant_reject_the_file(url: str, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(jsonl(ROWS))
    problems = rejected(cli_load(url, path, "--tenant", "t1"))
    assert problems == [
        {"line": 2, "reason": "tenant_id 't2' is not 't1', the tenant this load is for"},
        {"line": 4, "reason": "tenant_id 't3' is not 't1', the tenant this load is for"},
    ]
    assert stored_count(url) == 0
    own = tmp_path / "own.jsonl"
    own.write_bytes(jsonl([ROWS[0], ROWS[2]]))
    loaded = cli_load(url, own, "--tenant", "t1")
    assert loaded.exit_code == 0, loaded.output
    assert json.loads(loaded.stdout)["data"]["tenants"] == ["t1"]
    # without --tenant the file still loads every tenant it names
    assert cli_load(url, path).exit_code == 0 and stored_count(url) == 4


def test_the_python_api_takes_the_tenant(url: str) -> None:
    engine = make_engine(url)
    try:
        with pytest.raises(FactsRejected) as info:
            load_facts(ROWS, engine=engine, catalog=demo_catalog(), tenant="t2")
        assert [p["line"] for p in info.value.details["problems"]] == [1, 3, 4]
        report = load_facts([ROWS[1]], engine=engine, catalog=demo_catalog(), tenant="t2")
        assert (report.inserted, report.tenants) == (1, ["t2"])
    finally:
        engine.dispose()


@pytest.mark.parametrize("tenant", ["", " t1", "t\x01", "t" * 200])
def test_a_malformed_tenant_is_a_usage_error(url: str, tmp_path: Path, tenant: str) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(jsonl([fact()]))
    result = cli_load(url, path, "--tenant", tenant)
    assert result.exit_code == 2, result.output
    assert json.loads(result.stderr)["error"]["type"] == "usage"
    engine = make_engine(url)
    try:
        with pytest.raises(UsageError):
            load_facts([fact()], engine=engine, catalog=demo_catalog(), tenant=tenant)
    finally:
        engine.dispose()
