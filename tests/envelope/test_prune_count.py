"""`refs prune` counts what it removed and says what it could not (issue 25, L4).

On a read-only state dir it reported `removed: 1` while the ref was still
listed; now that is `ref/prune_failed` (exit 7) with the counts, and the ref
is still listed.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from small_fs import small_fs

from qdsl.cli.main import cli
from qdsl.envelope import atomic

BIG = {"QDSL_REF_THRESHOLD": "1024"}  # `catalog` is over it: its result becomes a ref


def _invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    res = CliRunner().invoke(cli, ["--json", *args], env=env)
    text = res.stdout if res.exit_code == 0 else res.stderr
    lines = [line for line in text.splitlines() if line.startswith("{")]
    return res.exit_code, json.loads(lines[-1])


def _listed() -> list[str]:
    code, env = _invoke("refs", "list")
    assert code == 0, env
    return [r["refId"] for r in env["data"]["refs"]]


def test_a_prune_that_cannot_remove_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    code, env = _invoke("catalog", env=BIG)
    assert code == 0 and env["refId"]
    ref = env["refId"]

    real_unlink = atomic.unlink

    def read_only(path: Path) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(atomic, "unlink", read_only)
    code, env = _invoke("refs", "prune", "--all")
    assert code == 7 and env["error"]["code"] == "ref/prune_failed", env
    details = env["error"]["details"]
    assert (details["removed"], details["failed"], details["remaining"]) == (0, 1, 1)
    assert "Read-only file system" in " ".join(details["reasons"])
    assert _listed() == [ref]
    monkeypatch.setattr(atomic, "unlink", real_unlink)  # (undo() would drop the state dir too)
    code, env = _invoke("refs", "prune", "--all")
    assert code == 0 and env["data"] == {"removed": 1, "remaining": 0}
    assert _listed() == []


def test_a_prune_on_a_read_only_state_dir_removes_nothing_and_says_so(tmp_path: Path) -> None:
    with small_fs(tmp_path) as fs:
        where = fs.mount("size=1m")
        env = {**os.environ, "QDSL_STATE_DIR": str(where / "state"), "QDSL_AUDIT": "off"}

        def qdsl(*args: str, big: bool = False) -> tuple[int, dict[str, Any]]:
            done = subprocess.run(
                [sys.executable, "-m", "qdsl.cli.main", "--json", *args],
                env={**env, **BIG} if big else env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            text = done.stdout if done.returncode == 0 else done.stderr
            return done.returncode, json.loads(text.strip().splitlines()[-1])

        code, made = qdsl("catalog", big=True)
        assert code == 0 and made["resultPersisted"] is True
        fs.read_only(where)
        code, pruned = qdsl("refs", "prune", "--all")
        assert code == 7 and pruned["error"]["code"] == "ref/prune_failed", pruned
        assert pruned["error"]["details"]["removed"] == 0
        code, listed = qdsl("refs", "list")
        assert code == 0
        assert [r["refId"] for r in listed["data"]["refs"]] == [made["refId"]]
