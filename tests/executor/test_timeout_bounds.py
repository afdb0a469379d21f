"""The statement timeout has a floor and a ceiling (issue 13, finding 7).

`--timeout-ms 0` used to disable the timeout (PostgreSQL reads 0 as "none"),
-1 and huge values reached the database and exited 8, and
`QDSL_STATEMENT_TIMEOUT_MS=100ms` was silently ignored.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.errors import UsageError
from qdsl.executor.run import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, timeout_from_env


@pytest.mark.parametrize("value", [0, -1, -5000, MAX_TIMEOUT_MS + 1, 2**31, 10**30])
def test_out_of_range_timeouts_are_usage_errors(value: int) -> None:
    with pytest.raises(UsageError) as info:
        timeout_from_env(value)
    assert info.value.subtype == "bad_timeout" and info.value.exit_code == 2


@pytest.mark.parametrize("raw", ["100ms", "0", "-1", "1e3", "5 000", "abc", "99999999999", "１０"])
def test_an_invalid_env_timeout_is_an_error_not_ignored(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QDSL_STATEMENT_TIMEOUT_MS", raw)
    with pytest.raises(UsageError) as info:
        timeout_from_env()
    assert "QDSL_STATEMENT_TIMEOUT_MS" in info.value.message


def test_valid_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    assert timeout_from_env(1) == 1 and timeout_from_env(MAX_TIMEOUT_MS) == MAX_TIMEOUT_MS
    monkeypatch.delenv("QDSL_STATEMENT_TIMEOUT_MS", raising=False)
    assert timeout_from_env() == DEFAULT_TIMEOUT_MS
    monkeypatch.setenv("QDSL_STATEMENT_TIMEOUT_MS", " 250 ")
    assert timeout_from_env() == 250
    assert timeout_from_env(300) == 300  # the explicit value wins


@pytest.mark.parametrize("value", ["0", "-1", str(MAX_TIMEOUT_MS + 1), "99999999999999999999"])
def test_cli_timeout_out_of_range_exits_2(value: str, sqlite_url: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["--json", "--db", sqlite_url, "run", "--tenant", "t1", "--timeout-ms", value,
         "--plan", "count project"],
    )
    assert result.exit_code == 2, result.stderr
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert error["type"] == "usage"


def test_cli_env_timeout_invalid_exits_2(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDSL_STATEMENT_TIMEOUT_MS", "100ms")
    result = CliRunner().invoke(
        cli, ["--json", "--db", sqlite_url, "run", "--tenant", "t1", "--plan", "count project"]
    )
    assert result.exit_code == 2, result.stderr
    assert json.loads(result.stderr.strip().splitlines()[-1])["error"]["subtype"] == "bad_timeout"
