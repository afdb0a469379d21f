"""The root command: `--version` honours `--json` (stdout holds only the envelope)."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest
from click.testing import CliRunner

from qdsl._version import DISTRIBUTION
from qdsl.cli.main import cli


def test_version_is_plain_text_without_json() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"qdsl {version('qdsl')}\n"


@pytest.mark.parametrize("args", [["--json", "--version"], ["--version", "--json"]])
def test_version_with_json_is_an_envelope_in_either_order(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    env = json.loads(result.stdout)
    assert env["ok"] is True and env["operation"] == "version"
    assert env["data"] == {"version": version(DISTRIBUTION)}
