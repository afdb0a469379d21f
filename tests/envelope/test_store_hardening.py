"""Ref store hardening: private directories (new or existing), no symlink
followed for any file or directory, no lock file, refIds that are safe file
names everywhere and never crash a command when malformed."""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from store_suites import PORTABLE

from qdsl.cli.main import cli
from qdsl.dsl.errors import RefError
from qdsl.envelope import atomic
from qdsl.envelope.emit import emit_success
from qdsl.envelope.records import REF_ID, is_ref_id, new_ref_id
from qdsl.envelope.settings import IoSettings
from qdsl.envelope.store import RefStore

BIG = {"items": [{"id": str(i), "title": "x" * 40} for i in range(300)]}


def _store(root: Path) -> RefStore:
    return RefStore(root, ttl_ms=600_000, max_count=50, max_bytes=10**9)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(params=["posix", "portable"])
def caps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Symlinks are refused with O_NOFOLLOW (POSIX) and by lstat (elsewhere)."""
    if request.param == "portable":
        monkeypatch.setattr(atomic, "CAPS", PORTABLE)
    yield request.param


# ------------------------------------------------------------- private dirs
def test_existing_open_directories_are_made_private(tmp_path: Path) -> None:
    root = tmp_path / "state"
    store = _store(root)
    rec = store.put("run", b"x")
    day = (store.dir / rec.relpath).parent
    for d in (root, store.dir, day):
        os.chmod(d, 0o777)
    store.gc()  # what every command runs first
    assert _mode(root) == _mode(store.dir) == 0o700
    os.chmod(day, 0o755)
    store.read_bytes(rec.ref_id)
    assert _mode(day) == 0o700


def test_every_command_makes_an_open_state_dir_private(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    res = CliRunner().invoke(cli, ["--json", "refs", "list"], env={"QDSL_STATE_DIR": str(root)})
    assert res.exit_code == 0
    assert _mode(root) == 0o700


def test_parents_of_a_nested_state_dir_are_created_private(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "c"
    rec = _store(root).put("run", b"x")
    for d in (tmp_path / "a", tmp_path / "a" / "b", root, root / "refs"):
        assert _mode(d) == 0o700, d
    assert _mode(root / "refs" / rec.relpath) == 0o600


def test_a_command_makes_a_nested_state_dir_with_private_parents(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "state"
    res = CliRunner().invoke(cli, ["--json", "schema"], env={"QDSL_STATE_DIR": str(root)})
    assert res.exit_code == 0, res.output
    for d in (tmp_path / "x", tmp_path / "x" / "y", root):
        assert _mode(d) == 0o700, d


def test_a_directory_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path / "state")
    rec = store.put("run", b"x")
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path).st_uid + 4242)
    with pytest.raises(RefError) as info:
        store.read_bytes(rec.ref_id)
    assert info.value.subtype == "ref_store_unsafe" and info.value.exit_code == 7
    assert "another user" in info.value.message and str(tmp_path) not in info.value.message
    out = io.StringIO()
    emit_success("run", BIG, out=out, store=store, settings=IoSettings(threshold=2048))
    env = json.loads(out.getvalue())
    assert env["resultPersisted"] is False
    assert "another user" in capsys.readouterr().err
    assert "another user" in store.gc().warnings[0]


def test_a_shared_sticky_directory_is_never_made_private(tmp_path: Path) -> None:
    """QDSL_STATE_DIR=/tmp must not turn /tmp into 0700."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    store = _store(shared)
    assert "sticky bit" in store.gc().warnings[0]
    out = io.StringIO()
    emit_success("run", BIG, out=out, store=store, settings=IoSettings(threshold=2048))
    assert json.loads(out.getvalue())["resultPersisted"] is False
    assert _mode(shared) == 0o1777


# ---------------------------------------------------------------- symlinks
def test_a_symlinked_index_is_never_followed(tmp_path: Path, caps: str) -> None:
    store = _store(tmp_path / "state")
    first = store.put("run", b"x")
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"precious\n")
    index = store.dir / "index.jsonl"
    index.unlink()
    index.symlink_to(target)
    second = store.put("run", b"y")  # its index line is not appended through the link
    assert target.read_bytes() == b"precious\n"
    assert {r.ref_id for r in store.records()} == {first.ref_id, second.ref_id}
    store.gc()  # the index is rebuilt as a file of its own, the link replaced
    assert target.read_bytes() == b"precious\n"
    assert not index.is_symlink()
    assert len(index.read_text().splitlines()) == 2


def test_a_symlinked_ref_file_is_refused(tmp_path: Path, caps: str) -> None:
    store = _store(tmp_path / "state")
    rec = store.put("run", b"x")
    path = store.dir / rec.relpath
    target = tmp_path / "planted.json"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(RefError) as info:
        store.read_bytes(rec.ref_id)
    assert info.value.subtype == "ref_store_unsafe"
    store.gc()
    assert target.exists() and not path.is_symlink()  # the link goes, never its target


@pytest.mark.parametrize("which", ["refs", "day"])
def test_a_symlinked_refs_or_day_directory_is_refused(
    tmp_path: Path, caps: str, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path / "state")
    rec = store.put("run", b"x")
    real = store.dir if which == "refs" else (store.dir / rec.relpath).parent
    moved = tmp_path / "moved"
    real.rename(moved)
    real.symlink_to(moved, target_is_directory=True)
    before = sorted(p.name for p in moved.rglob("*"))

    with pytest.raises(RefError) as info:
        store.read_bytes(rec.ref_id)
    assert info.value.subtype == "ref_store_unsafe"
    assert "symbolic link" in info.value.message and str(tmp_path) not in info.value.message
    out = io.StringIO()
    emit_success("run", BIG, out=out, store=store, settings=IoSettings(threshold=2048))
    assert json.loads(out.getvalue())["resultPersisted"] is False
    assert "symbolic link" in capsys.readouterr().err
    report = store.gc()
    if which == "refs":
        assert "symbolic link" in report.warnings[0]
    assert sorted(p.name for p in moved.rglob("*")) == before  # nothing written through it


def test_no_lock_file_is_opened(tmp_path: Path) -> None:
    """A planted `.lock` symlink once made the store create its target."""
    store = _store(tmp_path / "state")
    store.put("run", b"x")
    target = tmp_path / "created-by-a-lock"
    (store.dir / ".lock").symlink_to(target)
    store.put("run", b"y")
    store.gc(prune_all=True)
    assert not target.exists()


# ------------------------------------------------------------------ ref ids
@pytest.mark.parametrize(
    "bad",
    [
        "r20261301T120000000-run-0123456789",  # month 13
        "r20260230T120000000-run-0123456789",  # Feb 30
        "r20260101T250000000-run-0123456789",  # hour 25
        "r00000101T000000000-run-0123456789",  # year 0
        "r٢٠٢٦٠١٠١T120000000-run-0123456789",  # non-ASCII digits
        "r20260101T120000000-run-0123456789/../../x",
        "r20260101T120000000-RUN-0123456789",
        "\ud800",
        "x" * 100_000,
        "",
    ],
)
def test_a_malformed_ref_id_is_a_typed_error(tmp_path: Path, bad: str) -> None:
    store = _store(tmp_path / "state")
    store.put("run", b"x")
    with pytest.raises(RefError) as info:
        store.read_bytes(bad)
    assert info.value.subtype == "ref_not_found" and len(info.value.message) < 200
    assert not is_ref_id(bad)


@pytest.mark.parametrize(
    "args",
    [
        ["refs", "get", "r20261301T120000000-run-0123456789"],
        ["refs", "show", "r20260230T120000000-run-0123456789"],
        ["parse", "--input-ref", "r20260230T120000000-run-0123456789"],
        ["chain", "--steps", '[{"op": "refs get", "input": {"ref": "r20261399T0-x-1"}}]'],
    ],
)
def test_cli_malformed_ref_ids_exit_7_not_1(tmp_path: Path, args: list[str]) -> None:
    res = CliRunner().invoke(cli, ["--json", *args], env={"QDSL_STATE_DIR": str(tmp_path)})
    assert res.exit_code == 7, res.output
    assert json.loads(res.stderr)["error"]["code"] == "ref/ref_not_found"


WINDOWS_RESERVED = (
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


@given(operation=st.text(max_size=80), now=st.integers(0, 253402300799999))
def test_ref_ids_are_file_names_on_every_platform(operation: str, now: int) -> None:
    ref_id = new_ref_id(operation, now)
    assert REF_ID.match(ref_id) and is_ref_id(ref_id)
    name = f"{ref_id}.json"
    assert all(c.isascii() and (c.isalnum() or c in "-_.") for c in name)
    assert len(name) < 64 and name.split(".", maxsplit=1)[0].lower() not in WINDOWS_RESERVED
    assert not name.endswith((" ", "."))
