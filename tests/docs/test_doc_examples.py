"""Every Python block of the README and docs/ runs as written (issue 23: the first
example of docs/python-api.md failed — `complete`, `question`, `engine` undefined,
a top-level `await`).

Each block runs in a fresh interpreter, in an empty directory holding the demo's
catalog as `catalog.toml` (the examples' "your catalog"), with its own state dir:
what a reader who copies the block gets. A block that needs what CI cannot have
is listed in `NOT_RUN` with the reason, and the list is checked to hold only
blocks that exist.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# (page, n-th python block of the page from 1): why it does not run here
NOT_RUN = {
    ("docs/llm.md", 1): "it calls the OpenAI and Anthropic APIs over the network",
}


def _blocks() -> list[tuple[str, int, str]]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for n, found in enumerate(FENCE.finditer(text), start=1):
            out.append((page.relative_to(ROOT).as_posix(), n, found.group(1)))
    return out


BLOCKS = _blocks()


def test_the_pages_hold_python_examples_and_the_skips_name_real_blocks() -> None:
    assert len(BLOCKS) >= 5
    assert set(NOT_RUN) <= {(page, n) for page, n, _ in BLOCKS}


@pytest.mark.parametrize(
    ("page", "n", "code"),
    [b for b in BLOCKS if (b[0], b[1]) not in NOT_RUN],
    ids=[f"{p}#{n}" for p, n, _ in BLOCKS if (p, n) not in NOT_RUN],
)
def test_the_block_runs_as_written(page: str, n: int, code: str, tmp_path: Path) -> None:
    shutil.copy(ROOT / "facts" / "demo" / "catalog.toml", tmp_path / "catalog.toml")
    env = {**os.environ, "QDSL_STATE_DIR": str(tmp_path / "state")}
    env.pop("QDSL_CATALOG", None)
    env.pop("QDSL_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{page}, python block {n}:\n{done.stderr[-3000:]}"
