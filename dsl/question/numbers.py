"""Numbers in a question, in Chinese and English forms, with their units.

20万, 二十万, 200k, 1.5M, 2 million, 百分之五, $3,000 all read as numbers. The
numeral words themselves go through `qdsl.dsl.numerals` (the verifier's reader
too), so the question and the answer are read alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from qdsl.dsl.numerals import rewrite_numerals

_SCALE = {
    "万": 1e4,
    "千": 1e3,
    "百万": 1e6,
    "千万": 1e7,
    "亿": 1e8,
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
}
_CURRENCY_BEFORE = r"(?:[$¥€£]|rmb|usd|cny|eur)?\s*"
_CURRENCY_AFTER = r"(?:\s*(?:元|块钱|块|美元|欧元|人民币|dollars?|usd|rmb|yuan|euros?))?"
_NUMBER = re.compile(
    _CURRENCY_BEFORE
    + r"(?<![a-z0-9_.-])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
    + r"(?:\s*(?P<u>百万|千万|万|千|亿|(?:thousand|millions?|billion|mn|bn|k|m|b)(?![a-z0-9])))?"
    + r"(?P<pct>\s*%)?"
    + _CURRENCY_AFTER
    + r"(?![0-9a-z_])"
)


@dataclass(frozen=True)
class Number:
    start: int
    end: int
    value: float
    percent: bool = False


def _scan(text: str) -> Iterator[Number]:
    for m in _NUMBER.finditer(text):
        value = float(m.group("n").replace(",", ""))
        unit = m.group("u")
        if unit:
            value *= _SCALE[unit]
        start = m.start("n")
        # A currency sign before the digits belongs to the number.
        lead = text[m.start() : start]
        if lead.strip():
            start = m.start()
        yield Number(start, m.end(), value, percent=bool(m.group("pct")))


def find_numbers(text: str) -> list[Number]:
    """Every number in `text` (normalized question text), with its span in `text`."""
    rewritten = rewrite_numerals(text)
    found: list[Number] = []
    if not rewritten.edits:
        return list(_scan(text))
    # Numeral words were rewritten to digits: scan the rewritten text and map
    # each match back onto the original through the edit table.
    edits = rewritten.edits
    for n in _scan(rewritten.text):
        s, e = _back(edits, len(text), n.start, end=False), _back(edits, len(text), n.end, end=True)
        if e > s:
            found.append(Number(s, e, n.value, n.percent))
    return found


def _back(edits: tuple[tuple[int, int, int, int], ...], size: int, i: int, *, end: bool) -> int:
    """Where rewritten index `i` sits in the original text."""
    shift = 0
    for o0, o1, n0, n1 in edits:
        if n0 < i < n1 or (i == n0 and not end) or (i == n1 and end):
            return o1 if end else o0
        if n1 <= i:
            shift = o1 - n1
    return min(max(i + shift, 0), size)
