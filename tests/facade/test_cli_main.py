"""The root command: `--version` honours `--json` (stdout holds only the envelope)."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

import pytest
from click.testing import CliRunner

from qdsl._version import DISTRIBUTION
from qdsl.cli.main import cli, main


def test_version_is_plain_text_without_json() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"qdsl {version(DISTRIBUTION)}\n"


@pytest.mark.parametrize("args", [["--json", "--version"], ["--version", "--json"]])
def test_version_with_json_is_an_envelope_in_either_order(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    env = json.loads(result.stdout)
    assert env["ok"] is True and env["operation"] == "version"
    assert env["data"] == {"version": version(DISTRIBUTION)}


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    with pytest.raises(SystemExit) as stop:
        main(["--json", *argv])
    assert stop.value.code == 2
    error: dict[str, Any] = json.loads(capsys.readouterr().err)["error"]
    assert error["code"] == "usage/bad_arguments"
    return error


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [
        (["aks", "how many projects"], "Did you mean 'ask'?"),
        (["schem"], "Did you mean 'schema'?"),
        (["refs", "lst"], "Did you mean 'list'?"),
        (["ask", "--tenat", "t1", "x"], "Did you mean '--tenant'?"),
    ],
)
def test_a_mistyped_command_or_option_gets_a_suggestion(
    argv: list[str], suggested: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 23: `qdsl aks` said "No such command 'aks'." and nothing more
    assert suggested in _usage_error(argv, capsys)["message"]


def test_nothing_close_suggests_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert "Did you mean" not in _usage_error(["zzzz"], capsys)["message"]
