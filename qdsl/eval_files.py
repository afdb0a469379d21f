"""Reading the case file of `qdsl eval` within bounds: the records, or a usage error.

A case file is user input like any other (a binary, a latin-1 export, a FIFO,
`/dev/zero`), read under the limits of `qdsl.dsl.settings.limits`:

* at most `[limits] input_bytes` (QDSL_MAX_INPUT_BYTES, 4 MiB) are read, one
  more to tell a larger file, which is refused (`usage/input_bytes_exceeded`);
* the bytes must be UTF-8 (a leading BOM is dropped); the first that is not
  is named by line;
* nesting is bounded by `[limits] json_depth` (QDSL_MAX_JSON_DEPTH, 64)
  before a parser recurses into it: arrays and inline tables, and the parts
  of a dotted TOML key (`a.b.c`, whose parsing grows with the square of its
  length), or the brackets of a JSON line;
* no string may hold a lone surrogate (a JSON `\\ud800` escape), which no
  output can print.

The records are then validated by `qdsl.evaluate.cases_from_records`, which
also bounds the questions (`check_questions`).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.limits import (
    Limits,
    check_json_depth,
    has_surrogate,
    limits,
    read_file_bounded,
)

__all__ = ["check_toml_nesting", "read_case_records"]

_BOM = "\ufeff"
# What TOML reads as text, consumed possessively (linear on any input): an
# unterminated string runs to the end of its line or of the file, where the
# parser stops anyway.
_TOML_TEXT = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*+(?:"""|\Z)'
    r"|'''(?:[^']|'(?!''))*+(?:'''|\Z)"
    r'|"(?:[^"\\\n]|\\.)*+"?'
    r"|'[^'\n]*+'?"
    r"|#[^\n]*+",
    re.DOTALL,
)
_BRACKET = re.compile(r"[\[\]{}]")
# A dotted key (or a float): bare parts joined by dots, a string part read as `s`.
_DOTTED = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]++(?:[ \t]*+\.[ \t]*+[A-Za-z0-9_-]++)++")


def check_toml_nesting(text: str, what: str, limit: Limits | None = None) -> None:
    """Refuse TOML nested deeper than `[limits] json_depth` before tomllib reads it."""
    lim = limit or limits()
    if text.count("[") + text.count("{") + text.count(".") <= lim.json_depth:
        return  # never deeper than its brackets and dots
    bare = _TOML_TEXT.sub("s", text)
    depth = 0
    for m in _BRACKET.finditer(bare):
        if m.group() in "[{":
            depth += 1
            if depth > lim.json_depth:
                raise lim.too_large("json_depth", f"{what}'s nesting", depth, "levels")
        else:
            depth = max(0, depth - 1)
    for m in _DOTTED.finditer(bare):
        parts = m.group().count(".") + 1
        if parts > lim.json_depth:
            raise lim.too_large("json_depth", f"a dotted key of {what}", parts, "levels")


def _strings(value: Any) -> Iterator[str]:
    """Every key and string of a JSON value (its depth is already bounded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _toml_records(text: str, source: str) -> list[dict[str, Any]]:
    check_toml_nesting(text, source)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError("invalid_cases", f"{source} is not valid TOML: {exc}") from None
    unknown = set(raw) - {"defaults", "case"}
    if unknown:
        raise UsageError(
            "invalid_cases",
            f"{source}: unknown top-level key(s) {sorted(unknown)}",
            hint="a case file holds [defaults] (tenant, now) and [[case]] tables",
        )
    defaults = raw.get("defaults", {})
    cases = raw.get("case", [])
    if not isinstance(defaults, dict) or not isinstance(cases, list):
        raise UsageError(
            "invalid_cases",
            f"{source}: defaults must be a table and case an array of tables",
            hint="write [defaults] once and one [[case]] per question",
        )
    if not all(isinstance(case, dict) for case in cases):
        raise UsageError("invalid_cases", f"{source}: every case must be a table ([[case]])")
    return [{**defaults, **case} for case in cases]


def _json_line(line: str, source: str, lineno: int) -> dict[str, Any]:
    where = f"{source} line {lineno}"
    check_json_depth(line, where)
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError("invalid_cases", f"{where} is not JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        reason = str(exc).split(":")[0][:80]
        raise UsageError(
            "invalid_cases", f"{where} is not JSON that can be read: {reason}"
        ) from None
    if not isinstance(value, dict):
        raise UsageError("invalid_cases", f"{where} is not a JSON object")
    if any(has_surrogate(s) for s in _strings(value)):
        raise UsageError(
            "invalid_cases",
            f"{where} holds a lone surrogate escape (such as \\ud800), which is no character",
            hint="escape a character outside the BMP as a surrogate pair, or write UTF-8",
        )
    return value


def _jsonl_records(text: str, source: str) -> list[dict[str, Any]]:
    return [
        _json_line(line, source, lineno)
        for lineno, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def _decoded(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            "bad_encoding",
            f"{source} is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line})",
            hint="convert it to UTF-8 (iconv -t UTF-8) and run it again",
            retryable=False,
        ) from None


def read_case_records(path: str | Path) -> tuple[list[dict[str, Any]], str]:
    """The raw case records of a `.toml` file ([defaults] + [[case]]) or JSON Lines,
    and the file's name (cases are named after it)."""
    p = Path(path)
    try:
        raw = read_file_bounded(p, "input_bytes", f"the case file {p.name}")
    except OSError as exc:
        raise UsageError(
            "cases_unreadable", f"cannot read {p.name}: {exc.strerror}", hint="pass a case file"
        ) from None
    text = _decoded(raw, p.name)
    if p.suffix == ".toml":
        return _toml_records(text, p.name), p.name
    return _jsonl_records(text, p.name), p.name
