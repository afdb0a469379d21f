"""Never exit 1 on a file (issue 25, F5 and F6): the file bombs of the CLI fuzz corpus.

`qdsl facts load` and `qdsl eval` get each bomb as a file, on stdin or
through a FIFO, and endless input through a pipe: a 100,000-deep JSON line,
a lone surrogate, a 200 KB CSV field, binary and latin-1 bytes, a value
longer than the lookup index holds, a number of 5,000 digits, oversize files
and lines, `/dev/zero`. Whatever comes in, the answer is exit 0 or a typed
error with a parseable envelope (test_cli_fuzz.assert_typed); the runs are
counted under "cli fuzz (file bombs)".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_cli_fuzz import FUZZ, assert_typed, run_cli

from qdsl.facts.db import upgrade

COUNT = "cli fuzz (file bombs)"
ROW = {"tenant_id": "t1", "entity_type": "project", "entity_id": "1",
       "predicate": "market_theme", "value_text": "港股"}
CSV_HEAD = b"tenant_id,entity_type,entity_id,predicate,value_text\n"


def _row(**changes: object) -> bytes:
    return json.dumps({**ROW, **changes}).encode() + b"\n"


FACTS_BOMBS: dict[str, tuple[str, bytes]] = {
    "deep-json": ("jsonl", b"[" * 100_000 + b"\n"),
    "deep-object": ("jsonl", b'{"a": ' * 50_000 + b"\n"),
    "lone-surrogate": ("jsonl", _row(value_text="\ud800")),
    "surrogate-key": ("jsonl", _row(**{"\udfff": "x"})),
    "huge-csv-field": ("csv", CSV_HEAD + b"t1,project,1,market_theme," + b"x" * 200_000 + b"\n"),
    "binary": ("jsonl", bytes(range(256)) * 16),
    "binary-csv": ("csv", CSV_HEAD + bytes(range(256)) * 16),
    "latin-1": ("jsonl", _row(value_text="café").replace(b"\\u00e9", b"\xe9")),
    "index-oversize": ("jsonl", _row(value_text="".join(chr(0x4E00 + i) for i in range(5000)))),
    "long-int": ("jsonl", b'{"entity_id": ' + b"7" * 5000 + b"}\n"),
    "huge-float": ("jsonl", _row(value_num=10**400)),
    "far-instant": ("jsonl", _row(observed_at="0001-01-01T00:00:00+14:00")),
    "nul-bytes": ("jsonl", b"\0" * 1000 + b"\n" + _row()),
    "oversize-line": ("jsonl", b'{"value_text": "' + b"x" * (2 * 1024 * 1024) + b'"}\n'),
    "bom-only": ("jsonl", b"\xef\xbb\xbf"),
    "csv-no-header": ("csv", b""),
}
EVAL_BOMBS: dict[str, tuple[str, bytes]] = {
    "deep-toml": ("toml", b"x = " + b"[" * 100_000 + b"\n"),
    "deep-inline-table": ("toml", b"x = " + b"{a = " * 100_000 + b"\n"),
    "dotted-key": ("toml", b"[case]\nx" + b".x" * 100_000 + b" = 1\n"),
    "deep-jsonl": ("jsonl", b"[" * 100_000 + b"\n"),
    "binary": ("toml", bytes(range(256)) * 16),
    "latin-1": ("jsonl", '{"question": "café", "tenant": "t1"}\n'.encode("latin-1")),
    "lone-surrogate": ("jsonl", b'{"question": "\\ud800", "tenant": "t1"}\n'),
    "oversize": ("jsonl", b'{"question": "' + b"x" * (5 * 1024 * 1024) + b'", "tenant": "t1"}\n'),
    "long-int": ("jsonl", b'{"question": "q", "tenant": "t1", "n": ' + b"9" * 5000 + b"}\n"),
    "case-not-table": ("toml", b"case = 1\n"),
    "nul-bytes": ("toml", b"\0" * 1000),
}


@pytest.fixture(scope="module")
def facts_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('bombs') / 'facts.sqlite3'}"
    upgrade(url)
    return url


@pytest.mark.parametrize("name", sorted(FACTS_BOMBS))
def test_facts_file_bombs_are_typed(
    name: str, facts_db: str, tmp_path: Path, suite_counts: Counter[str]
) -> None:
    fmt, data = FACTS_BOMBS[name]
    path = tmp_path / f"bomb.{fmt}"
    path.write_bytes(data)
    for args, stdin in (
        (["--db", facts_db, "facts", "load", str(path)], b""),
        (["--db", facts_db, "facts", "load", "--format", fmt, "-"], data),
    ):
        assert_typed(*run_cli(args, stdin), what=(name, args[-1]))
        suite_counts[COUNT] += 1


@pytest.mark.parametrize("name", sorted(EVAL_BOMBS))
def test_eval_file_bombs_are_typed(name: str, tmp_path: Path, suite_counts: Counter[str]) -> None:
    fmt, data = EVAL_BOMBS[name]
    path = tmp_path / f"cases.{fmt}"
    path.write_bytes(data)
    code, out, err = run_cli(["eval", str(path)])
    assert code == 2, (name, err[-500:])
    assert_typed(code, out, err, what=name)
    suite_counts[COUNT] += 1


def _feed_fifo(fifo: Path, stop: threading.Event) -> None:
    """Write zeros into `fifo` until its reader goes (or the test gives up)."""
    fd = os.open(fifo, os.O_WRONLY)
    try:
        while not stop.is_set():
            os.write(fd, b"\0" * 65536)
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("command", ["facts", "eval"])
def test_an_endless_fifo_is_read_to_a_bound(
    command: str, facts_db: str, tmp_path: Path, suite_counts: Counter[str]
) -> None:
    fifo = tmp_path / ("endless.jsonl" if command == "facts" else "endless.toml")
    os.mkfifo(fifo)
    stop = threading.Event()
    writer = threading.Thread(target=_feed_fifo, args=(fifo, stop), daemon=True)
    writer.start()
    args = (["--db", facts_db, "facts", "load", str(fifo)] if command == "facts"
            else ["eval", str(fifo)])
    try:
        code, out, err = run_cli(args)
    finally:
        stop.set()
        writer.join(timeout=60)
    assert code == (3 if command == "facts" else 2), err[-500:]
    assert_typed(code, out, err, what=command)
    suite_counts[COUNT] += 1


@pytest.mark.parametrize("command", ["facts", "eval"])
def test_dev_zero_is_read_to_a_bound(
    command: str, facts_db: str, suite_counts: Counter[str]
) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this platform")
    args = (["--db", facts_db, "facts", "load", "--format", "jsonl", "/dev/zero"]
            if command == "facts" else ["eval", "/dev/zero"])
    assert_typed(*run_cli(args), what=command)
    suite_counts[COUNT] += 1


@pytest.mark.parametrize("command", ["facts", "eval"])
def test_an_endless_pipe_is_read_to_a_bound(
    command: str, facts_db: str, tmp_path: Path, suite_counts: Counter[str]
) -> None:
    """A real process with a pipe that never ends on stdin (`yes | qdsl ...`)."""
    tail = ["facts", "load", "-"] if command == "facts" else ["eval", "/dev/stdin"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qdsl.cli.main", "--json", "--db", facts_db, *tail],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "QDSL_STATE_DIR": str(tmp_path / "state")},
    )
    assert proc.stdin is not None
    chunk = b"y" * 65536

    def feed() -> None:
        try:
            while True:
                proc.stdin.write(chunk)  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.wait(timeout=300)
    writer.join(timeout=60)
    assert_typed(proc.returncode, out, err, what=command)
    suite_counts[COUNT] += 1


@FUZZ
@given(data=st.binary(max_size=400), fmt=st.sampled_from(["jsonl", "csv"]))
def test_any_bytes_as_a_facts_file_are_typed(
    data: bytes, fmt: str, facts_db: str, tmp_path: Path, suite_counts: Counter[str]
) -> None:
    path = tmp_path / f"any.{fmt}"
    path.write_bytes(data)
    assert_typed(*run_cli(["--db", facts_db, "facts", "load", str(path)]), what=data[:40])
    suite_counts[COUNT] += 1


@FUZZ
@given(data=st.binary(max_size=400), fmt=st.sampled_from(["toml", "jsonl"]))
def test_any_bytes_as_a_case_file_are_typed(
    data: bytes, fmt: str, facts_db: str, tmp_path: Path, suite_counts: Counter[str]
) -> None:
    path = tmp_path / f"any.{fmt}"
    path.write_bytes(data)
    # --db: a file of no cases still opens the database, never the demo's to build
    assert_typed(*run_cli(["--db", facts_db, "eval", str(path)]), what=data[:40])
    suite_counts[COUNT] += 1
