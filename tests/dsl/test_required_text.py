"""The reader's cheap skips never hide a match.

`required.requirement` reads the literal text a pattern needs; the question
reader runs only the cue patterns whose needed text the question holds
(`PatternIndex`), and scans function words by first character. Properties:
a pattern the skip rules out never matches, whatever the text; the segment
finders give the same pieces, in the same order, as running every pattern
and finding every word one by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.dsl.question import segment
from qdsl.dsl.question import words as W
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.required import PatternIndex, may_match, requirement
from qdsl.dsl.textnorm import normalize_text

CUE_PATTERNS = [pat for _, patterns in W.COMPILED_CUES for pat in patterns]
OTHER_PATTERNS = [
    re.compile(p)
    for p in (
        r"ab(?:cd|ef)+g",
        r"x[yz]w?",
        r"(?:foo|)bar",
        r"(a)\1b",
        r"(?i)case",
        r"pre(?i:fix)",
        r"[^a]bc",
        r"(?>atom)ic",
        r"q{2,3}r",
        r"s*t",
        r"[a-e]z",
        r"\d+万",
        r"(?=look)ahead",
        r"你好|hello",
    )
]
# Words of the patterns, broken up and glued together, so matches are common.
PARTS = sorted(
    {w for p in CUE_PATTERNS for w in re.findall(r"[\w' ]+", p.pattern)}
    | {"ab", "cd", "ef", "g", "xyw", "bar", "foo", "aab", "CASE", "preFIX", "zbc", "atomic"}
    | {"qqr", "st", "ez", "12万", "lookahead", "你好", "hello", "有", "吗", "么", "?", " "}
)
texts = st.lists(st.sampled_from(PARTS) | st.text(max_size=3), max_size=8).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=texts)
def test_a_pattern_ruled_out_never_matches(text: str) -> None:
    for pattern in CUE_PATTERNS + OTHER_PATTERNS:
        if not may_match(requirement(pattern), text):
            assert pattern.search(text) is None, (pattern.pattern, text)


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_the_index_names_every_pattern_that_matches_in_order(text: str) -> None:
    patterns = CUE_PATTERNS + OTHER_PATTERNS
    chosen = PatternIndex(patterns).candidates(text)
    assert chosen == sorted(set(chosen))
    matching = [i for i, p in enumerate(patterns) if p.search(text)]
    assert set(matching) <= set(chosen)


def test_what_a_pattern_needs() -> None:
    assert requirement(re.compile("有什么区别")) == (("有什么区别",),)
    assert requirement(re.compile(r"\bvs\.?(?!\w)")) == (("vs",),)
    assert requirement(re.compile(r"[吗么嘛](?=\W*$)")) == (("吗", "么", "嘛"),)
    assert requirement(re.compile(r"\bhow (?:is|are)\b")) == (("how ",), ("is", "are"))
    # nothing known: case-insensitive, a branch that needs nothing, a back reference
    assert requirement(re.compile("(?i)abc")) == ()
    assert requirement(re.compile("pre(?i:fix)")) == ()
    assert requirement(re.compile("(?:foo|)")) == ()
    assert requirement(re.compile(r"(a)\1")) == ()
    assert may_match((), "")


def _old_cue_pieces(text: str) -> Iterator[Piece]:
    for qt, patterns in W.COMPILED_CUES:
        for pat in patterns:
            for m in pat.finditer(text):
                if m.end() > m.start():
                    yield Piece(m.start(), m.end(), m.group(), Kind.CUE, query_type=qt)
    for m in segment._NEGATION.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.NEGATION)


def _old_function_pieces(text: str) -> Iterator[Piece]:
    for word in segment._FUNCTION_ZH:
        start = text.find(word)
        while start >= 0:
            yield Piece(start, start + len(word), word, Kind.FUNCTION)
            start = text.find(word, start + 1)
    for m in segment._FUNCTION_EN.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.FUNCTION)
    for phrase in W.FUNCTION_PHRASES:
        for m in re.finditer(phrase, text):
            yield Piece(m.start(), m.end(), m.group(), Kind.FUNCTION)


question_parts = st.sampled_from(
    sorted(
        set(PARTS)
        | set(W.FUNCTION_ZH)
        | set(W.FUNCTION_EN)
        | {"项目", "A 股", "64", "，", "'s", " in total", " total number"}
    )
)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(question_parts | st.text(max_size=2), max_size=10))
def test_segment_finds_what_every_pattern_and_word_finds(parts: list[str]) -> None:
    text = normalize_text("".join(parts))
    assert list(segment._cue_pieces(text)) == list(_old_cue_pieces(text))
    assert list(segment._function_pieces(text)) == list(_old_function_pieces(text))
