"""The distribution's name: one no other project holds on the package index (SPEC),
written once (qdsl/_version.py), and the one every install line of the docs uses."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from qdsl._version import DISTRIBUTION
from qdsl.mcp import INSTALL_HINT

ROOT = Path(__file__).resolve().parents[1]
# `qdsl` on the index is another project (0.2.4, nested dicts): installing it is not us
TAKEN = frozenset({"qdsl"})


def test_the_wheel_carries_the_distribution_name() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION
    assert DISTRIBUTION not in TAKEN
    assert project["scripts"]["qdsl"]  # the command keeps the import root's name


def test_every_install_line_names_the_distribution() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    lines = [
        line
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.search(r"\bpip install\b", line) and "-e " not in line
    ]
    assert lines, "the docs show how to install"
    for line in [*lines, INSTALL_HINT]:
        named = re.findall(r"pip install\s+['\"`]?([A-Za-z0-9_.-]+)", line)
        assert named and all(n == DISTRIBUTION for n in named), line
