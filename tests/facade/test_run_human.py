"""`qdsl run` for a person shows the columns the plan selected (issue 23: it showed
only each row's id and name; the selected columns were in `--json` only)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from qdsl.cli.main import cli

PLAN = "list project\nselect id, title, status, budget\nlimit 3"


def _run(tmp_path: Path, *args: str) -> str:
    res = CliRunner().invoke(
        cli, [*args, "run", "--plan", PLAN, "--tenant", "t1"], env={"QDSL_STATE_DIR": str(tmp_path)}
    )
    assert res.exit_code == 0, res.output
    return res.stdout


def test_each_row_shows_every_selected_column(tmp_path: Path) -> None:
    items = json.loads(_run(tmp_path, "--json"))["data"]["answer"]["items"]
    lines = _run(tmp_path).splitlines()
    header = lines[1].split()
    assert header == ["id", "title", "status", "budget", "evidence"]
    for item, line in zip(items, lines[2:5], strict=True):
        cells = line.split("  ")
        shown = [c.strip() for c in cells if c.strip()]
        assert shown[0] == str(item["id"])
        assert shown[1] == item["title"]
        assert shown[2] == item["status"]
        assert float(shown[3]) == float(item["budget"])
        assert shown[4] == f"project:{item['id']}"


def test_a_row_without_its_name_selected_shows_its_label(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli,
        ["run", "--plan", "list project\nselect id, status\nlimit 2", "--tenant", "t1"],
        env={"QDSL_STATE_DIR": str(tmp_path)},
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[1].split() == ["id", "label", "status", "evidence"]
