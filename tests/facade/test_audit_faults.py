"""The audit log when it cannot be written (issue 25, F8 and L2).

A read-only state dir, a full disk, a symlink anywhere on the audit log's
path, a state dir of another user: the request fails with a typed error
(`usage/audit_unwritable`, exit 2) and gives no answer, since no answer leaves
without its audit line; nothing is written through a symlink or into another
user's directory; and no torn line is left in the log.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from small_fs import fill, small_fs

from qdsl import audit_file, audit_sinks
from qdsl.audit import AUDIT_FILE, RotatingFileSink
from qdsl.cli import main as cli_main

QUESTION = "how many projects"


def _ask(
    capsys: pytest.CaptureFixture[str], db: str, *extra: str
) -> tuple[int, str, dict[str, Any] | None]:
    """(exit code, stdout, the error envelope on stderr or None)."""
    with pytest.raises(SystemExit) as done:
        cli_main.main(["--json", "--db", db, "ask", QUESTION, "--tenant", "t1", *extra])
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("{")]
    code = done.value.code
    return (code if isinstance(code, int) else 1), out, (json.loads(lines[-1]) if lines else None)


def _new_process() -> None:
    """What a new `qdsl` process starts with: no audit file open."""
    for sink in audit_sinks._SINKS.values():
        close = getattr(sink, "close", None)
        if close is not None:
            close()
    audit_sinks._SINKS.clear()


def _state() -> Path:
    return Path(os.environ["QDSL_STATE_DIR"])


def _assert_refused(result: tuple[int, str, dict[str, Any] | None], *words: str) -> dict[str, Any]:
    code, out, env = result
    assert code == 2 and out == "", (code, out, env)
    assert env is not None and env["error"]["code"] == "usage/audit_unwritable"
    text = env["error"]["message"] + " " + (env["error"]["hint"] or "")
    for word in words:
        assert word in text, text
    return env


def _lines(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "a torn line at the end of the log"
    return [json.loads(line) for line in data.splitlines()]


# ------------------------------------------------------------------ symlinks (L2)
def test_a_symlinked_audit_file_is_never_followed(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ask(capsys, sqlite_url)[0] == 0
    log = _state() / "audit" / AUDIT_FILE
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"precious\n")
    log.unlink()
    log.symlink_to(target)
    _assert_refused(_ask(capsys, sqlite_url), "symbolic link")
    assert target.read_bytes() == b"precious\n"


def test_a_symlinked_audit_dir_is_never_followed(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _state().mkdir(mode=0o700)
    (_state() / "audit").symlink_to(elsewhere, target_is_directory=True)
    _assert_refused(_ask(capsys, sqlite_url), "symbolic link")
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_rotation_lock_or_copy_is_never_followed(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    target = tmp_path / "target"
    target.write_bytes(b"precious\n")
    Path(f"{path}.1").symlink_to(target)  # a rotated copy: renamed itself, never written
    sink = RotatingFileSink(path, max_bytes=100, keep=3)
    sink.write(json.dumps({"n": 1, "pad": "x" * 120}))  # rotates
    assert Path(f"{path}.2").is_symlink() and target.read_bytes() == b"precious\n"
    Path(f"{path}.lock").unlink()
    Path(f"{path}.lock").symlink_to(target)
    with pytest.raises(OSError) as info:
        sink.write(json.dumps({"n": 2, "pad": "x" * 120}))
    assert info.value.errno == errno.ELOOP
    assert target.read_bytes() == b"precious\n"


# ----------------------------------------------------- another user's state dir (L2)
def _tree(root: Path) -> dict[str, tuple[int, int, int, int]]:
    found = {}
    for path in [root, *root.rglob("*")]:
        st = os.lstat(path)
        found[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid)
    return found


def test_a_state_dir_of_another_user_is_never_written(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if os.name != "posix":
        pytest.skip("owners are POSIX")
    import pwd

    try:
        nobody = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        nobody = 65534
    for argv in (  # the state dir as use leaves it: demo database, audit log, a cache
        ["--json", "ask", QUESTION, "--tenant", "t1"],
        ["--json", "parse", "--plan", "list projec x"],
    ):
        with pytest.raises(SystemExit):
            cli_main.main(argv)
    capsys.readouterr()
    state = _state()
    assert {"audit", "demo.sqlite3"} <= {p.name for p in state.iterdir()}
    try:
        for path in [state, *state.rglob("*")]:
            os.chown(path, nobody, nobody, follow_symlinks=False)
    except PermissionError:
        pytest.skip("cannot give files to another user here")
    _new_process()
    before = _tree(state)
    for argv in (
        ["--json", "--db", sqlite_url, "ask", QUESTION, "--tenant", "t1"],
        ["--json", "ask", QUESTION, "--tenant", "t1"],
        ["--json", "run", "--plan", "count project", "--tenant", "t1"],
        ["--json", "--db", sqlite_url, "run", "--plan", "count project", "--tenant", "t1"],
        ["--json", "demo", "init"],
        ["--json", "audit", "tail"],
        ["--json", "parse", "--plan", "list projec x"],
    ):
        with pytest.raises(SystemExit) as done:
            cli_main.main(argv)
        out, err = capsys.readouterr()
        found = [line for line in err.splitlines() if line.startswith("{")]
        assert found, (argv, done.value.code, out, err)
        env = json.loads(found[-1])
        assert done.value.code == 2, (argv, env)
        assert env["error"]["code"] in ("usage/state_dir_unsafe", "usage/audit_unwritable")
        assert "another user" in env["error"]["message"], env
        assert str(state) not in err
    with pytest.raises(SystemExit) as done:
        cli_main.main(["--json", "parse", "--plan", "list project"])  # needs no state
    assert done.value.code == 0
    capsys.readouterr()
    assert _tree(state) == before


# --------------------------------------------------------------- unwritable (F8)
def test_a_read_only_audit_log_is_a_typed_error(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def read_only(path: Path, flags: int = 0) -> int:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(audit_file, "open_private", read_only)
    env = _assert_refused(_ask(capsys, sqlite_url), "Read-only file system", "writable")
    assert str(_state()) not in json.dumps(env)


def test_a_read_only_state_dir_is_a_typed_error(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with small_fs(tmp_path) as fs:
        where = fs.mount("size=1m")
        monkeypatch.setenv("QDSL_STATE_DIR", str(where / "state"))
        assert _ask(capsys, sqlite_url)[0] == 0
        _new_process()  # a file open for writing would keep the remount from happening
        fs.read_only(where)
        _assert_refused(_ask(capsys, sqlite_url), "Read-only file system")


def test_a_short_write_leaves_no_partial_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk takes what fits of a write, then refuses the rest: the part
    written is cut off again."""
    path = tmp_path / "audit.jsonl"
    sink = RotatingFileSink(path)
    sink.write(json.dumps({"n": 0}))
    real_write = os.write
    calls: list[int] = []

    def full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data)[:7])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError):
        sink.write(json.dumps({"n": 1, "pad": "x" * 50}))
    monkeypatch.setattr(os, "write", real_write)
    assert len(calls) == 2
    sink.write(json.dumps({"n": 2}))
    assert [e["n"] for e in _lines(path)] == [0, 2]


def test_a_full_disk_gives_typed_errors_and_never_tears_a_line(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The red team's run: 30 questions on a disk that fills up, a page freed now
    and then; every answer has its line, every refusal is typed, no line is torn."""
    with small_fs(tmp_path) as fs:
        where = fs.mount("size=256k")
        monkeypatch.setenv("QDSL_STATE_DIR", str(where / "state"))
        assert _ask(capsys, sqlite_url)[0] == 0
        fillers = fill(where)
        answered, refused = [], 0
        for _ in range(30):
            code, out, env = _ask(capsys, sqlite_url)
            if code == 0:
                answered.append(json.loads(out)["meta"]["traceId"])
                continue
            assert code == 2 and out == "", (code, env)
            assert env is not None and env["error"]["code"] == "usage/audit_unwritable"
            assert "No space left on device" in env["error"]["message"]
            refused += 1
            if fillers:
                fillers.pop().unlink()  # a page free: some lines fit, the one across its end not
        lines = _lines(where / "state" / "audit" / AUDIT_FILE)  # each one whole
        logged = {e["trace_id"] for e in lines}
        assert set(answered) <= logged
        assert answered and refused, (len(answered), refused)


def test_audit_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "audit.jsonl"
        path.write_text("")
        os.chmod(path, 0o666)  # made by an older qdsl under umask 000
        sink = RotatingFileSink(path, max_bytes=100, keep=3)
        for n in range(4):
            sink.write(json.dumps({"n": n, "pad": "x" * 80}))
    finally:
        os.umask(old)
    made = sorted(tmp_path.iterdir())
    assert {p.name for p in made} >= {"audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.lock"}
    for p in made:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
