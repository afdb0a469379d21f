"""The files qdsl keeps in its state dir (issue 25, L3, L2 and F9).

Every file qdsl creates there is 0600 and every directory 0700 whatever the
umask; the demo database (and what SQLite keeps beside it) is never opened
through a symlink; and a demo database that the disk cannot hold is a typed
error, with the audit log on or off, never exit 1.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from small_fs import small_fs
from sqlalchemy.exc import OperationalError

from qdsl.facts.dberrors import DiskFull, classify


def _qdsl(
    state: Path, *args: str, umask: int | None = None, **env: str
) -> tuple[int, str, dict[str, Any] | None]:
    """Run `qdsl --json ARGS` in a process of its own: (exit code, stdout, error envelope)."""
    done = subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", "--json", *args],
        env={**os.environ, "QDSL_STATE_DIR": str(state), **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,
    )
    found = [line for line in done.stderr.splitlines() if line.startswith("{")]
    return done.returncode, done.stdout, json.loads(found[-1]) if found else None


def test_every_file_in_the_state_dir_is_private_whatever_the_umask(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for args in (
        ["demo", "init"],  # the demo database, its WAL files, the set-up lock
        ["ask", "how many projects", "--tenant", "t1"],  # the audit log
        ["parse", "--plan", "list projec x"],  # both grammar caches
        ["run", "--plan", "list project", "--tenant", "t1"],  # the result key
        ["catalog"],  # over the threshold: a ref
    ):
        code, _out, env = _qdsl(state, *args, umask=0, QDSL_REF_THRESHOLD="1024")
        assert code in (0, 3), (args, env)
    made = {p.relative_to(state).as_posix(): p for p in state.rglob("*")}
    assert {"demo.sqlite3", "demo.sqlite3.lock", "audit/audit.jsonl",
            "result-mac.key", "cache/seal.key", "refs/index.jsonl"} <= set(made)
    assert any(name.startswith("cache/plan-grammar-") for name in made)
    wrong = {
        name: oct(stat.S_IMODE(path.lstat().st_mode))
        for name, path in made.items()
        if stat.S_IMODE(path.lstat().st_mode) != (0o700 if path.is_dir() else 0o600)
    }
    assert wrong == {}
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


@pytest.mark.parametrize("name", ["demo.sqlite3", "demo.sqlite3-wal", "demo.sqlite3.lock"])
def test_a_symlinked_demo_database_is_never_followed(tmp_path: Path, name: str) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = tmp_path / "precious"
    target.write_bytes(b"precious\n")
    (state / name).symlink_to(target)
    for args in (["demo", "init"], ["ask", "how many projects", "--tenant", "t1"]):
        code, out, env = _qdsl(state, *args, QDSL_AUDIT="off")
        assert code == 2 and out == "", (code, env)
        assert env is not None and env["error"]["code"] == "usage/state_dir_unsafe"
        assert f"{name} in the state dir is a symbolic link" in env["error"]["message"]
        assert str(tmp_path) not in json.dumps(env)
    assert target.read_bytes() == b"precious\n"


def test_sqlite_and_postgresql_disk_full_is_its_own_fault() -> None:
    full = OperationalError("INSERT ...", {}, sqlite3.OperationalError("database or disk is full"))
    err = classify(full, where="sqlite+pysqlite:///…/demo.sqlite3")
    assert isinstance(err, DiskFull) and err.code == "database/disk_full"
    assert "is full" in err.message and err.retryable is False

    class PgDiskFull(Exception):
        sqlstate = "53100"

    err = classify(OperationalError("INSERT ...", {}, PgDiskFull("could not extend file")))
    assert err.code == "database/disk_full"


@pytest.mark.parametrize("audit", ["off", "on"])
@pytest.mark.parametrize("size", ["16k", "256k", "1m", "4m"])
def test_the_demo_database_on_a_full_disk_is_a_typed_error(
    tmp_path: Path, size: str, audit: str
) -> None:
    """`qdsl demo init` and the first `ask` (which creates the embedded database)."""
    with small_fs(tmp_path) as fs:
        where = fs.mount(f"size={size}")
        for args in (["demo", "init"], ["ask", "how many projects", "--tenant", "t1"]):
            code, out, env = _qdsl(where / "state", *args, QDSL_AUDIT=audit)
            assert env is not None, (args, code, out)
            assert (code, env["error"]["code"]) in (
                (8, "database/disk_full"),
                (2, "usage/audit_unwritable"),
            ), env
            assert out == ""
            text = env["error"]["message"]
            assert "is full" in text or "No space left on device" in text, env
            if code == 2:
                assert env["error"]["details"]["unaudited"] == "database/disk_full"


@pytest.mark.parametrize("layout", ["symlink", "another user"])
def test_a_config_file_qdsl_did_not_get_from_the_user_is_not_read(
    tmp_path: Path, layout: str
) -> None:
    """A config.toml behind a symlink, or another user's, would set the file input
    policy (here: allow) and the limits: it is refused, never taken."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    theirs = tmp_path / "theirs.toml"
    theirs.write_text('[io]\nfile_input = "allow"\n')
    if layout == "symlink":
        (state / "config.toml").symlink_to(theirs)
        reason = "a symbolic link"
    else:
        shutil.copy(theirs, state / "config.toml")
        try:
            os.chown(state / "config.toml", 65534, 65534)
        except PermissionError:
            pytest.skip("cannot give a file to another user here")
        reason = "belongs to another user"
    plan = tmp_path / "plan.txt"
    plan.write_text("count project")
    code, out, env = _qdsl(state, "parse", "--input", str(plan))
    assert code == 2 and out == "", (code, out)
    assert env is not None and env["error"]["code"] == "usage/bad_config"
    assert reason in env["error"]["message"]
