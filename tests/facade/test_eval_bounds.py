"""`qdsl eval` reads its case file within bounds (issue 25, F6 and R4).

Deep TOML or JSON Lines, binary and latin-1 files, `/dev/zero` (read to
2.6 GB), a 100 MB file and a 9 MB question (34 s, 975 MB) each exited 1 or
ran unbounded; now each is a usage error (exit 2) naming the limit or the
line, before any question is asked. The limits are `[limits] input_bytes`
(the file, each question, and the questions together) and `json_depth`.
"""

from __future__ import annotations

import json
import os
import threading
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.cli.main import cli
from qdsl.dsl.errors import UsageError
from qdsl.evaluate import load_cases

CASE = '[[case]]\nid = "a"\nquestion = "现在有多少个项目"\ntenant = "t1"\n'


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


BOMBS: list[tuple[str, bytes, str]] = [
    ("deep-array.toml", b"x = " + b"[" * 100_000 + b"\n", "usage/json_depth_exceeded"),
    ("deep-table.toml", b"x = " + b"{a = " * 100_000 + b"\n", "usage/json_depth_exceeded"),
    ("dotted.toml", b"[case]\nx" + b".x" * 100_000 + b" = 1\n", "usage/json_depth_exceeded"),
    ("deep.jsonl", b"[" * 100_000 + b"\n", "usage/json_depth_exceeded"),
    ("deep-object.jsonl", b'{"a": ' * 50_000 + b"\n", "usage/json_depth_exceeded"),
    ("binary.toml", bytes(range(256)) * 64, "usage/bad_encoding"),
    ("latin1.jsonl", '{"question": "café", "tenant": "t1"}\n'.encode("latin-1"),
     "usage/bad_encoding"),
    ("surrogate.jsonl", b'{"question": "\\ud800", "tenant": "t1"}\n', "usage/invalid_cases"),
    ("long-int.jsonl", b'{"question": "q", "tenant": "t1", "x": ' + b"9" * 5000 + b"}\n",
     "usage/invalid_cases"),
    ("table-not-array.toml", b"case = 1\n", "usage/invalid_cases"),
    ("defaults-not-table.toml", b"defaults = 1\n[[case]]\nquestion = 'q'\n", "usage/invalid_cases"),
]


@pytest.mark.parametrize(("name", "data", "code"), BOMBS, ids=[b[0] for b in BOMBS])
def test_a_hostile_case_file_is_a_usage_error(
    tmp_path: Path, name: str, data: bytes, code: str
) -> None:
    path = _write(tmp_path, name, data)
    result = CliRunner().invoke(cli, ["--json", "eval", str(path)])
    assert result.exit_code == 2, result.output[-2000:]
    assert json.loads(result.stderr)["error"]["code"] == code
    with pytest.raises(UsageError):
        load_cases(path)


def test_the_bad_byte_is_named_by_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.toml", CASE.encode() + b'# caf\xe9\n')
    with pytest.raises(UsageError) as info:
        load_cases(path)
    assert info.value.message == "c.toml is not UTF-8 text (byte 0xe9 on line 5)"


def test_dev_zero_is_read_to_the_limit_only(monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this platform")
    monkeypatch.setenv("QDSL_MAX_INPUT_BYTES", "100000")
    with pytest.raises(UsageError) as info:
        load_cases("/dev/zero")
    assert info.value.subtype == "input_bytes_exceeded"
    assert info.value.details["max"] == 100_000


def test_a_file_over_the_input_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QDSL_MAX_INPUT_BYTES", "2000")
    path = _write(tmp_path, "big.toml", (CASE + "# padding\n" * 300).encode())
    result = CliRunner().invoke(cli, ["--json", "eval", str(path)])
    assert result.exit_code == 2
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "usage/input_bytes_exceeded"
    assert "QDSL_MAX_INPUT_BYTES" in error["hint"]


def test_a_question_over_the_input_limit_is_refused_before_it_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from qdsl.evaluate import cases_from_records, check_questions

    # records from anywhere (a file's are no longer than the file, already bounded)
    monkeypatch.setenv("QDSL_MAX_INPUT_BYTES", "5000")
    cases = cases_from_records([{"id": "long", "question": "项" * 2000, "tenant": "t1"}], "f")
    with pytest.raises(UsageError) as info:
        check_questions(cases, "f")
    assert info.value.subtype == "input_bytes_exceeded"
    assert "the question of case `long`" in info.value.message


def test_a_default_question_counts_once_per_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[defaults] may give every case one long question: each case asks it."""
    monkeypatch.setenv("QDSL_MAX_INPUT_BYTES", "20000")
    text = f'[defaults]\ntenant = "t1"\nquestion = "{"项目" * 500}"\n' + "[[case]]\n" * 10
    path = _write(tmp_path, "d.toml", text.encode())
    assert len(path.read_bytes()) < 20_000
    with pytest.raises(UsageError) as info:
        load_cases(path)
    assert info.value.message.startswith("the questions of d.toml together is over the limit")


# -- the TOML nesting check ----------------------------------------------------------


def _toml_value(depth: int, kind: str) -> str:
    text = "1"
    for _ in range(depth):
        text = f"[{text}]" if kind == "array" else f"{{k = {text}}}"
    return text


@pytest.mark.parametrize("kind", ["array", "table"])
def test_nesting_up_to_the_limit_is_read(kind: str) -> None:
    from qdsl.eval_files import check_toml_nesting

    check_toml_nesting(f"x = {_toml_value(64, kind)}\n", "f")
    with pytest.raises(UsageError):
        check_toml_nesting(f"x = {_toml_value(65, kind)}\n", "f")


def test_brackets_and_dots_in_strings_and_comments_do_not_count() -> None:
    from qdsl.eval_files import check_toml_nesting

    text = (
        f'a = "{"[" * 100}{"." * 100}"\nb = \'{"{" * 100}\'\n# {"[" * 100}\n'
        f'c = """\n{"[" * 100}\n"""\nd = \'\'\'{"a." * 100}\'\'\'\n'
        + '"x"."y".z = 1.5\n'
    )
    check_toml_nesting(text, "f")
    tomllib.loads(text)


_TOKENS = st.sampled_from(
    ["[", "]", "{", "}", '"', "'", '"' * 3, "'" * 3, "#", "\n", ".", "a", " = ", ",", "\\", "1",
     "x = ", "[[case]]\n"]
)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _parsed(text: str) -> tuple[object, BaseException | None]:
    """tomllib's reading of `text` in a fresh thread: the default recursion limit
    then applies to tomllib alone, whatever the depth of the test's own stack."""
    out: list[object] = [None, None]

    def run() -> None:
        try:
            out[0] = tomllib.loads(text)
        except BaseException as exc:
            out[1] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    error = out[1]
    assert error is None or isinstance(error, BaseException)
    return out[0], error


@settings(max_examples=300)
@given(
    opening=st.sampled_from(["", "x = ", "x.y = ", "[a]\nx = "]),
    deep=st.integers(0, 2000),
    bracket=st.sampled_from(["[", "{k = ", "a."]),
    parts=st.lists(_TOKENS, max_size=300),
)
def test_whatever_passes_the_check_is_nested_within_the_limit(
    opening: str, deep: int, bracket: str, parts: list[str]
) -> None:
    """Text the check lets through never makes tomllib recurse out of stack (a
    nesting past a few hundred levels would), and without dotted keys it is
    nested at most 64 levels as tomllib reads it: the check never undercounts."""
    from qdsl.eval_files import check_toml_nesting

    text = opening + bracket * deep + "".join(parts)
    try:
        check_toml_nesting(text, "f")
    except UsageError:
        return
    value, error = _parsed(text)
    assert not isinstance(error, RecursionError), text[:200]
    if error is None and "." not in text:
        assert _depth(value) <= 64 + 3  # the document, and a [[header]]'s array and table
