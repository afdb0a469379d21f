"""Lark's analysed grammar is cached in qdsl's private state dir, never in the
system temp dir, and a cache file is loaded only when qdsl sealed it: loading
Lark's cache unpickles it, and a pickle runs code (issue 25, F1)."""

from __future__ import annotations

import os
import pickle
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from qdsl.dsl.plan import grammar_cache
from qdsl.dsl.plan.grammar_cache import SEAL, open_slot

PARSE_BOTH = (
    "from qdsl.dsl.plan.parser import parse_text\n"
    "from qdsl.dsl.errors import PlanError\n"
    "assert parse_text('count project', spans=False).entity_type == 'project'\n"
    "assert parse_text('list project').entity_type == 'project'\n"
    "try:\n"
    "    parse_text('list projec x', spans=False)\n"
    "except PlanError as exc:\n"
    "    assert exc.subtype == 'syntax_error'\n"
    "else:\n"
    "    raise AssertionError('refused plan parsed')\n"
)


def _run(state: Path, tmp: Path | None = None) -> None:
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    subprocess.run([sys.executable, "-c", PARSE_BOTH], env=env, check=True, timeout=600)


def _cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("plan-grammar-*.lark"))


def test_both_parsers_cache_in_the_private_state_dir(tmp_path: Path) -> None:
    state, tmp = tmp_path / "nested" / "state", tmp_path / "tmp"
    tmp.mkdir()
    _run(state, tmp)
    cache = state / "cache"
    names = [p.name.rsplit("-", 1)[0] for p in _cache_files(cache)]
    assert names == ["plan-grammar-located", "plan-grammar-unlocated"]
    if os.name == "posix":
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "nested").stat().st_mode) == 0o700
        for made in cache.iterdir():
            assert stat.S_IMODE(made.stat().st_mode) == 0o600, made
    # Lark's default would have written .lark_cache_*.tmp here, where anyone can write
    assert list(tmp.iterdir()) == []
    for path in _cache_files(cache):
        assert SEAL in path.read_bytes()
    before = [(p.name, p.stat().st_ino, p.stat().st_mtime_ns) for p in _cache_files(cache)]
    _run(state, tmp)  # a second process loads the sealed tables and parses the same
    assert [(p.name, p.stat().st_ino, p.stat().st_mtime_ns) for p in _cache_files(cache)] == before


def test_no_usable_state_dir_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("QDSL_STATE_DIR", str(blocker / "state"))
    assert open_slot("located", "grammar").lark is False


# ---------------------------------------------------------------- planted pickles
class _Touch:
    """Unpickling this creates the file `path`: the proof that a pickle ran."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[str, str]]:
        return (open, (self.path, "w"))


def _plant(target: Path, proof: Path, *, seal: bytes = b"") -> None:
    """Lark's cache layout (a header line, then pickles) with code in the first
    pickle, optionally ending in a seal line of the planter's making."""
    target.write_bytes(b"0" * 64 + b"\n" + pickle.dumps(_Touch(proof)) + seal)


def _forged_seal() -> bytes:
    return SEAL + b"ab" * 32 + b"\n"


def _chown_or_skip(path: Path, uid: int) -> None:
    try:
        os.chown(path, uid, uid, follow_symlinks=False)
    except (PermissionError, AttributeError, OSError) as exc:
        pytest.skip(f"cannot give a file to another user here ({exc})")


def _other_uid() -> int:
    if os.name != "posix":
        pytest.skip("owners are POSIX")
    import pwd

    try:
        uid = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        uid = 65534
    if uid == os.geteuid():
        pytest.skip("running as nobody")
    return uid


def _primed(tmp_path: Path) -> Path:
    """A state dir whose cache holds this qdsl's own sealed files."""
    state = tmp_path / "state"
    _run(state)
    assert len(_cache_files(state / "cache")) == 2
    return state


def _assert_never_loaded(state: Path, proof: Path) -> None:
    _run(state)  # parsing works (both parsers, a refusal too)
    assert not proof.exists(), "a planted pickle was loaded"


def test_a_cache_swapped_by_the_dirs_owner_is_never_loaded(tmp_path: Path) -> None:
    state = _primed(tmp_path)
    proof = tmp_path / "PWNED"
    for path, seal in zip(_cache_files(state / "cache"), (b"", _forged_seal()), strict=True):
        _plant(path, proof, seal=seal)
    _assert_never_loaded(state, proof)
    # rebuilt and sealed with qdsl's own key: the next process loads them as they are
    before = [p.stat().st_ino for p in _cache_files(state / "cache")]
    _assert_never_loaded(state, proof)
    assert [p.stat().st_ino for p in _cache_files(state / "cache")] == before


def test_a_sealed_file_copied_from_another_state_dir_is_not_loaded(tmp_path: Path) -> None:
    """The seal is keyed per state dir and covers the file's path."""
    ours = _primed(tmp_path / "a")
    other = _primed(tmp_path / "b")
    proof = tmp_path / "PWNED"
    for theirs in _cache_files(other / "cache"):
        body = theirs.read_bytes()
        _plant(theirs, proof, seal=body[body.rfind(SEAL) :] if SEAL in body else b"")
        shutil.copy(theirs, ours / "cache" / theirs.name)
    _assert_never_loaded(ours, proof)


def test_a_symlinked_cache_dir_is_never_followed(tmp_path: Path) -> None:
    """A `cache/` pointing elsewhere, holding files sealed with a key planted beside
    them: none of it is read."""
    state = _primed(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(state / "cache", elsewhere)
    proof = tmp_path / "PWNED"
    for path in _cache_files(elsewhere):
        _plant(path, proof)
        body = path.read_bytes()
        key_file = elsewhere / grammar_cache.KEY_FILE
        if key_file.exists():
            real = state / "cache" / path.name  # the path qdsl would seal
            seal = grammar_cache._seal(key_file.read_bytes(), real, body)
            path.write_bytes(body + SEAL + seal + b"\n")
    shutil.rmtree(state / "cache")
    (state / "cache").symlink_to(elsewhere, target_is_directory=True)
    _assert_never_loaded(state, proof)
    assert (state / "cache").is_symlink()


def test_a_cache_file_that_is_a_symlink_is_never_followed(tmp_path: Path) -> None:
    state = _primed(tmp_path)
    proof = tmp_path / "PWNED"
    for path in _cache_files(state / "cache"):
        planted = tmp_path / f"planted-{path.name}"
        _plant(planted, proof)
        path.unlink()
        path.symlink_to(planted)
    _assert_never_loaded(state, proof)
    assert not any(p.is_symlink() for p in _cache_files(state / "cache"))


def test_a_state_dir_of_another_user_is_never_read(tmp_path: Path) -> None:
    uid = _other_uid()
    state = _primed(tmp_path)
    proof = tmp_path / "PWNED"
    for path in _cache_files(state / "cache"):
        _plant(path, proof)
    for made in [state, *state.rglob("*")]:
        _chown_or_skip(made, uid)
    _assert_never_loaded(state, proof)
    assert all(p.stat().st_uid == uid for p in _cache_files(state / "cache"))


@pytest.mark.parametrize("planter", ["another user", "the owner"])
def test_a_group_or_world_writable_dir_is_never_trusted(tmp_path: Path, planter: str) -> None:
    state = _primed(tmp_path)
    uid = _other_uid() if planter == "another user" else os.geteuid()
    proof = tmp_path / "PWNED"
    for path in _cache_files(state / "cache"):
        path.unlink()  # as anyone may in a writable directory
        _plant(path, proof, seal=_forged_seal())
        _chown_or_skip(path, uid)
    os.chmod(state, 0o777)
    os.chmod(state / "cache", 0o777)
    _assert_never_loaded(state, proof)
    for folder in (state, state / "cache"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_the_cli_never_loads_a_planted_cache(tmp_path: Path) -> None:
    """The red team's command: `qdsl --json parse --plan 'list project'`."""
    state = _primed(tmp_path)
    proof = tmp_path / "PWNED"
    for path in _cache_files(state / "cache"):
        _plant(path, proof)
    env = {**os.environ, "QDSL_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", "--json", "parse", "--plan", "list project"],
        env=env,
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not proof.exists()
