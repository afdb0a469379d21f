"""Never exit 1 on input (issue 13, finding 5).

Arbitrary text and bytes go to every CLI channel; whatever comes in, qdsl
answers with exit code 0 or a typed error (never 1, internal) and a parseable
envelope. The CLI runs in-process through `qdsl.cli.main.main` with real
byte streams (strict UTF-8, as a UTF-8 terminal or pipe is), plus a few real
processes for argv bytes that are not UTF-8.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.cli.main import main

ERROR_TYPES = {"usage", "validation", "not_covered", "verification", "policy", "ref", "database"}
PLAN = "count project"
# A JSON document 10^5 levels deep: json.loads raised RecursionError on every channel.
DEEP = "[" * 100_000
SEEDS = [
    "",
    "\ud800",
    '"\\ud800"',
    '{"query_type": "count", "entity_type": "project", "filters": '
    '[{"field": "title", "operator": "equals", "value": "\\ud800"}]}',
    DEEP,
    '{"a": ' * 50_000,
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59-14:00",
    "r20261399T000000Z-0000",
    '{"query_type": "count", "entity_type": "project", "limit": 1e999}',
    'count project where priority > 99999999999999999999999999',
    "\x00",
]


class _Kept(io.BytesIO):
    """Keeps its bytes when the text wrapper around it is closed."""

    def close(self) -> None:
        pass


@contextmanager
def _streams(stdin: bytes) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    out, err = _Kept(), _Kept()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def run_cli(args: list[str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    with _streams(stdin) as (out, err):
        try:
            main(["--json", *args])
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()


def _last_json_line(raw: bytes) -> dict[str, Any]:
    # "\n" only: an envelope may hold U+0085 or U+2028, which splitlines() splits on
    lines = [ln for ln in raw.decode("utf-8").split("\n") if ln.startswith("{")]
    assert lines, raw[-500:]
    doc: dict[str, Any] = json.loads(lines[-1])
    return doc


def assert_typed(code: int, out: bytes, err: bytes, what: object) -> None:
    assert code != 1, (what, err.decode("utf-8", "replace")[-800:])
    if code == 0:
        assert _last_json_line(out)["ok"] is True
        return
    envelope = _last_json_line(err)
    assert envelope["ok"] is False and envelope["schemaVersion"] == 1
    assert envelope["error"]["type"] in ERROR_TYPES, envelope


def _channels(db: str, value: str) -> list[tuple[list[str], bytes]]:
    raw = value.encode("utf-8", "surrogatepass")
    return [
        (["parse", "--plan", value], b""),
        (["--db", db, "run", "--tenant", "t1", "--plan", value], b""),
        (["--db", db, "run", "--tenant", "t1", "--input", "-"], raw),
        (["compile", "--input-json", value], b""),
        (["--db", db, "run", "--tenant", value, "--plan", PLAN], b""),
        (["--db", db, "run", "--tenant", "t1", "--now", value, "--plan", PLAN], b""),
        (["verify", "--tenant", "t1", "--plan", PLAN, "--result", "-", "--answer", value], raw),
        (["verify", "--tenant", "t1", "--plan", PLAN, "--result", value, "--answer", "{}"], b""),
        (["chain", "--steps", value], b""),
        (["chain", "--steps", "-"], raw),
        (["refs", "get", value], b""),
        (["--db", db, "run", "--tenant", "t1", "--input-ref", value], b""),
    ]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: repr(s[:30]))
def test_seeded_hostile_inputs_on_every_channel(
    seed: str, sqlite_url: str, suite_counts: Counter[str]
) -> None:
    for args, stdin in _channels(sqlite_url, seed):
        assert_typed(*run_cli(args, stdin), what=(args[:6], seed[:40]))
        suite_counts["cli fuzz (in-process runs)"] += 1


FUZZ = settings()  # the profile's examples (ci 100, deep 1,000)
_TEXT = st.one_of(
    st.text(max_size=60),
    st.sampled_from(SEEDS),
    st.builds(lambda a, b: a + b, st.sampled_from(["{", "[", '{"query_type": ', PLAN]), st.text()),
)


@FUZZ
@given(value=_TEXT, channel=st.integers(0, 11))
def test_any_text_on_any_channel_is_typed(
    value: str, channel: int, sqlite_url: str, suite_counts: Counter[str]
) -> None:
    args, stdin = _channels(sqlite_url, value)[channel]
    assert_typed(*run_cli(args, stdin), what=(args[:6], value[:40]))
    suite_counts["cli fuzz (in-process runs)"] += 1


@FUZZ
@given(data=st.binary(max_size=200), channel=st.sampled_from([2, 6, 9]))
def test_any_bytes_on_stdin_are_typed(
    data: bytes, channel: int, sqlite_url: str, suite_counts: Counter[str]
) -> None:
    args, _ = _channels(sqlite_url, "")[channel]
    assert_typed(*run_cli(args, data), what=(args[:6], data[:40]))
    suite_counts["cli fuzz (in-process runs)"] += 1


@pytest.mark.parametrize(
    "argv",
    [
        [b"parse", b"--plan", b"count project where title = \"\xff\""],
        [b"run", b"--tenant", b"t\xc3(", b"--plan", b"count project"],
        [b"run", b"--tenant", b"t1", b"--now", b"\xed\xa0\x80", b"--plan", b"count project"],
        [b"ask", b"--tenant", b"t1", b"\xfe\xfe"],
        [b"chain", b"--steps", b"[\x80]"],
    ],
)
def test_argv_that_is_not_utf8_is_a_usage_error(
    argv: list[bytes], tmp_path: Path, suite_counts: Counter[str]
) -> None:
    env = {**os.environ, "QDSL_STATE_DIR": str(tmp_path), "LC_ALL": "C.UTF-8"}
    proc = subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", "--json", *argv],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    suite_counts["cli fuzz (argv subprocesses)"] += 1
    assert proc.returncode == 2, proc.stderr[-500:]
    envelope = _last_json_line(proc.stderr)
    assert envelope["error"]["type"] == "usage" and envelope["error"]["subtype"] == "bad_encoding"


# -- JMESPath (issue 25, F3 / F7) ------------------------------------------------------
# What a caller writes as an expression: `refs get`, `--pick`, a chain's `refs get`
# step and a chain's `$.` reference. `@|[@,@]` x 19 killed the process (x 16 wrote a
# 219 MB ref), 3,000 levels of nesting were a RecursionError (exit 1).
JMES_BOMBS = [
    "@" + "|[@,@]" * 16,
    "@" + "|[@,@]" * 19,
    "@" + "|[@,@]" * 60,
    "[" * 3000 + "@" + "]" * 3000,
    "[" * 1500 + "@" + "]" * 1500,
    "!" * 3000 + "@",
    "@" + "|@" * 2000,
    "@" + "[*]" * 1300,
    "{a:" * 1000 + "@" + "}" * 1000,
    "`" + "[" * 2000 + "]" * 2000 + "`",
    "to_string(@" + "|[@,@]" * 30 + ")",
    # 4,096 empty strings joined by a 3,000-character separator: 12 MB of text
    "join('" + "x" * 3000 + "', map(&'', @" + "|[@,@]" * 12 + "|[]" * 11 + "))",
    "map(&[@,@,@,@,@,@,@,@], " * 12 + "to_array(@)" + ")" * 12,
    "data." + "a" * 10_000,
]


@pytest.fixture
def jmes_refs(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Two refs to read expressions over: one shared, one of tenant t1."""
    monkeypatch.setenv("QDSL_REF_THRESHOLD", "1024")
    refs = {}
    for name, args in (
        ("shared", ["schema"]),
        ("t1", ["--db", sqlite_url, "run", "--tenant", "t1", "--plan", "list project"]),
    ):
        code, out, _err = run_cli(args)
        assert code == 0
        refs[name] = _last_json_line(out)["refId"]
    return refs


def _jmes_channels(db: str, refs: dict[str, str], expr: str) -> list[list[str]]:
    step = {"op": "refs get", "input": {"ref": refs["shared"], "expr": expr}}
    first = {"op": "refs get", "input": {"ref": refs["shared"], "expr": "data"}}
    pick = {"op": "refs get", "input": {"ref": "$." + expr}}
    return [
        ["refs", "get", refs["shared"], expr],
        ["refs", "get", "--tenant", "t1", refs["t1"], expr],
        ["--db", db, "run", "--tenant", "t1", "--input-ref", refs["t1"], "--pick", expr],
        ["chain", "--steps", json.dumps([step])],
        ["chain", "--steps", json.dumps([first, pick])],
    ]


@pytest.mark.parametrize("bomb", JMES_BOMBS, ids=lambda s: repr(s[:24]))
def test_jmespath_bombs_on_every_expression_channel_are_typed(
    bomb: str,
    sqlite_url: str,
    jmes_refs: dict[str, str],
    suite_counts: Counter[str],
) -> None:
    for args in _jmes_channels(sqlite_url, jmes_refs, bomb):
        code, out, err = run_cli(args)
        assert_typed(code, out, err, what=(args[:4], bomb[:40]))
        if args[0] in ("refs", "--db"):  # a bomb is refused, never answered
            assert code == 2, err[-400:]
        suite_counts["cli fuzz JMESPath (in-process runs)"] += 1
    # nothing over the store's byte cap was ever written
    from qdsl.envelope.store import open_store

    store = open_store()
    assert all(r.bytes <= store.max_bytes for r in store.records())


_JMES_ATOMS = st.sampled_from(["@", "data", "keys(@)", "data.*", "`[1, 2]`", "'x'", "*"])


def _jmes_combined(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(inner, inner)
    return st.one_of(
        st.builds(lambda a, n: f"({a})" + "|[@,@]" * n, inner, st.integers(1, 40)),
        two.map(lambda p: f"[{p[0]}, {p[1]}]"),
        two.map(lambda p: f"({p[0]}) || ({p[1]})"),
        inner.map(lambda a: f"({a})[*]"),
        inner.map(lambda a: f"({a})[]"),
        inner.map(lambda a: f"({a})[?@]"),
        inner.map(lambda a: f"to_string({a})"),
        inner.map(lambda a: f"join(',', {a})"),
        inner.map(lambda a: f"length({a})"),
        inner.map(lambda a: f"{{k: {a}}}"),
        inner.map(lambda a: f"map(&[@, @, @], {a})"),
        inner.map(lambda a: f"sort_by({a}, &to_string(@))"),
        st.builds(lambda a, n: "[" * n + a + "]" * n, inner, st.integers(1, 2000)),
        st.builds(lambda a, n: "!" * n + a, inner, st.integers(1, 3000)),
    )


_JMES = st.recursive(_JMES_ATOMS, _jmes_combined, max_leaves=8)


@FUZZ
@given(expr=_JMES, channel=st.integers(0, 4))
def test_any_jmespath_on_any_expression_channel_is_typed(
    expr: str,
    channel: int,
    sqlite_url: str,
    jmes_refs: dict[str, str],
    suite_counts: Counter[str],
) -> None:
    args = _jmes_channels(sqlite_url, jmes_refs, expr)[channel]
    assert_typed(*run_cli(args), what=(args[:4], expr[:60]))
    suite_counts["cli fuzz JMESPath (in-process runs)"] += 1


def test_a_comparison_jmespath_cannot_make_is_a_usage_error(
    jmes_refs: dict[str, str], suite_counts: Counter[str]
) -> None:
    """jmespath orders a string against a number as Python does, which raises
    TypeError (exit 1): the list's ids are strings."""
    expr = "data.answer.items[?id > `10`]"
    code, out, err = run_cli(["refs", "get", "--tenant", "t1", jmes_refs["t1"], expr])
    assert_typed(code, out, err, what=expr)
    assert code == 2 and _last_json_line(err)["error"]["code"] == "usage/bad_expression"
    suite_counts["cli fuzz JMESPath (in-process runs)"] += 1
