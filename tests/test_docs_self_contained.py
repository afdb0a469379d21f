"""The project documents itself: README, docs, `--help` and the plan schema
point only inside the repository, every docs link resolves, and the data keys
the Python API page lists are the ones the query kinds declare."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from qdsl.cli.main import COMMANDS, cli
from qdsl.dsl.kinds import KINDS
from qdsl.dsl.plan.schema import plan_json_schema

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
OUTSIDE = re.compile(r"\.\./shared|SPEC\.md|\bSPEC\s*§?\d")
LINK = re.compile(r"\]\(([^)#\s]+\.md)(#[^)]*)?\)")


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_a_page_points_only_inside_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not OUTSIDE.findall(text)
    for target, _anchor in LINK.findall(text):
        assert (page.parent / target).is_file(), f"{page.name} links to missing {target}"


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_root_help_names_the_docs_pages() -> None:
    text = _help()
    for page in ("cli", "plan-language", "catalog", "envelopes", "python-api"):
        assert f"docs/{page}.md" in text
        assert (ROOT / "docs" / f"{page}.md").is_file()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_points_only_inside_the_repository(command: str) -> None:
    assert not OUTSIDE.findall(_help(command))


def test_the_plan_schema_points_only_inside_the_repository() -> None:
    assert not OUTSIDE.findall(json.dumps(plan_json_schema()))


def test_the_python_api_page_lists_the_declared_data_keys() -> None:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    for kind in KINDS.values():
        row = re.search(rf"^\| {kind.contract.value} \| (.+) \|$", text, re.MULTILINE)
        assert row is not None, kind.contract
        listed = set(re.findall(r"`(\w+)`", row.group(1)))
        assert kind.data_keys <= listed, (kind.contract, listed)
