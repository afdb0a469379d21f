"""`qdsl db upgrade`, `qdsl demo init` (idempotent) and bare `qdsl demo`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.errors import UsageError
from qdsl.facts.db import HEAD_REVISION, default_database_url, state_dir
from qdsl.facts.demo.data import DEMO_TENANTS


def _json(args: list[str]) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(cli, ["--json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_default_database_lives_in_the_state_dir() -> None:
    state = state_dir()
    assert str(state) == os.environ["QDSL_STATE_DIR"]
    assert state.stat().st_mode & 0o777 == 0o700
    assert default_database_url().endswith(f"{state}/demo.sqlite3")


def test_state_dir_creates_missing_parents_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 13, finding 6: Path.mkdir(parents=True) made the parents 0755.
    nested = tmp_path / "a" / "b" / "state"
    tmp_path.chmod(0o755)
    monkeypatch.setenv("QDSL_STATE_DIR", str(nested))
    old = os.umask(0o022)
    try:
        assert state_dir() == nested
    finally:
        os.umask(old)
    for made in (tmp_path / "a", tmp_path / "a" / "b", nested):
        assert made.stat().st_mode & 0o777 == 0o700, made
    assert tmp_path.stat().st_mode & 0o777 == 0o755  # an existing parent is left as it was


def test_state_dir_inside_a_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("x")
    for where in (tmp_path / "file", tmp_path / "file" / "state"):
        monkeypatch.setenv("QDSL_STATE_DIR", str(where))
        with pytest.raises(UsageError) as info:
            state_dir()
        assert info.value.subtype == "state_dir_unusable"


def test_db_upgrade_and_demo_init_are_idempotent() -> None:
    code, env = _json(["db", "upgrade"])
    assert code == 0 and env["ok"] is True
    # docs/envelopes.md: no absolute path in output; the file is named, its directory is not.
    database = "sqlite+pysqlite:///…/demo.sqlite3"
    assert env["data"] == {"database": database, "revision": HEAD_REVISION}
    assert str(state_dir()) not in json.dumps(env)
    assert _json(["db", "upgrade"])[0] == 0

    code, env = _json(["demo", "init"])
    data = env["data"]
    assert code == 0 and isinstance(data, dict)
    assert data["seededTenants"] == list(DEMO_TENANTS)
    code, env = _json(["demo", "init"])
    again = env["data"]
    assert code == 0 and isinstance(again, dict)
    assert again["seededTenants"] == []
    assert again["rows"] == data["rows"]


def test_db_flag_selects_the_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    code, env = _json(["--db", url, "db", "upgrade"])
    assert env["ok"] is True
    assert code == 0
    assert (tmp_path / "other.sqlite3").exists()
    assert not (state_dir() / "demo.sqlite3").exists()


def test_bad_url_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["--json", "--db", "mysql://x/y", "db", "upgrade"])
    assert result.exit_code == 2
    assert json.loads(result.stderr or result.output)["error"]["code"] == (
        "usage/unsupported_database"
    )


def test_unreachable_database_exits_8() -> None:
    url = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"
    result = CliRunner().invoke(cli, ["--json", "--db", url, "db", "upgrade"])
    assert result.exit_code == 8
    assert json.loads(result.stderr or result.output)["error"]["code"] == "database/unreachable"


def test_bare_demo_seeds_then_runs_the_demo_show(monkeypatch: pytest.MonkeyPatch) -> None:
    import qdsl.demo_show

    calls: list[bool] = []

    def fake_main(engine: object = None) -> int:
        calls.append((state_dir() / "demo.sqlite3").exists())
        return 0

    monkeypatch.setattr(qdsl.demo_show, "main", fake_main)
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    assert calls == [True]


def test_sqlite_file_in_a_missing_directory_is_a_missing_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'missing' / 'x.sqlite3'}"
    result = CliRunner().invoke(cli, ["--json", "--db", url, "demo", "init"])
    assert result.exit_code == 8
    error = json.loads(result.stderr or result.output)["error"]
    assert error["code"] == "database/database_missing" and error["retryable"] is False
    assert "driver_message" not in error["details"]
    # QDSL_DEBUG=1 shows the driver's own words
    monkeypatch.setenv("QDSL_DEBUG", "1")
    result = CliRunner().invoke(cli, ["--json", "--db", url, "demo", "init"])
    error = json.loads(result.stderr or result.output)["error"]
    assert error["details"]["driver_message"] == "unable to open database file"


def test_database_errors_show_no_absolute_path(tmp_path: Path) -> None:
    # docs/envelopes.md: a failing SQLite file is named, its directory (the state dir) is not.
    url = f"sqlite:///{tmp_path / 'missing' / 'x.sqlite3'}"
    result = CliRunner().invoke(cli, ["--json", "--db", url, "db", "upgrade"])
    assert result.exit_code == 8
    assert str(tmp_path) not in result.stderr + result.stdout
    error = json.loads(result.stderr)["error"]
    assert error["message"] == "cannot open the SQLite database sqlite+pysqlite:///…/x.sqlite3"


def test_unusable_state_dir_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("QDSL_STATE_DIR", str(blocker / "state"))
    result = CliRunner().invoke(cli, ["--json", "db", "upgrade"])
    assert result.exit_code == 2
    assert str(tmp_path) not in result.stderr + result.stdout
    assert json.loads(result.stderr)["error"]["code"] == "usage/state_dir_unusable"


def test_bare_demo_with_json_prints_one_envelope() -> None:
    from qdsl.demo_show import QUESTIONS

    result = CliRunner().invoke(cli, ["--json", "demo"])
    assert result.exit_code == 0, result.stderr
    env = json.loads(result.stdout)
    assert env["ok"] is True and env["operation"] == "demo"
    answers = env["data"]["answers"]
    assert [(a["tenant"], a["question"]) for a in answers] == list(QUESTIONS)
    assert answers[0]["status"] == "answered" and answers[0]["verdict"] == "pass"


def test_demo_runs_over_the_db_flag_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    result = CliRunner().invoke(cli, ["--json", "--db", url, "demo"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"]["answers"][0]["status"] == "answered"
    assert (tmp_path / "other.sqlite3").exists()
    assert not (state_dir() / "demo.sqlite3").exists()
