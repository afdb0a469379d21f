"""Lark's analysed grammar is cached in qdsl's private state dir, never in the
system temp dir, where another local user could plant the pickle it loads."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from qdsl.dsl.parser import grammar_cache

PARSE_BOTH = (
    "from qdsl.dsl.parser import parse_text\n"
    "parse_text('count project', spans=False)\n"
    "parse_text('count project')\n"
)


def _run(state: Path, tmp: Path) -> None:
    env = {**os.environ, "QDSL_STATE_DIR": str(state), "TMPDIR": str(tmp)}
    subprocess.run([sys.executable, "-c", PARSE_BOTH], env=env, check=True, timeout=600)


def test_both_parsers_cache_in_the_private_state_dir(tmp_path: Path) -> None:
    state, tmp = tmp_path / "nested" / "state", tmp_path / "tmp"
    tmp.mkdir()
    _run(state, tmp)
    cache = state / "cache"
    assert sorted(p.name for p in cache.iterdir()) == [
        "plan-grammar-located.lark",
        "plan-grammar-unlocated.lark",
    ]
    if os.name == "posix":
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "nested").stat().st_mode) == 0o700
    # Lark's default would have written .lark_cache_*.tmp here, where anyone can write
    assert list(tmp.iterdir()) == []
    _run(state, tmp)  # a second process loads the cached tables and parses the same


def test_no_usable_state_dir_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("QDSL_STATE_DIR", str(blocker / "state"))
    assert grammar_cache("located") is False
    monkeypatch.setenv("QDSL_STATE_DIR", str(tmp_path / "s"))
    assert grammar_cache("located") == str(tmp_path / "s" / "cache" / "plan-grammar-located.lark")
