"""covers_conditions matches values as literals (issue 13, finding 4).

It compiled one regex per filter value (`c1\\s*c2\\s*...`): 92% of the time for
a 300 KB value. Values are now found with str.find over the text with its
whitespace squashed out, mapped back to the text; the spans are exactly the
regex's (a property against the former implementation), and no regex is built
from a value.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from qdsl.verifier.checks import conditions
from qdsl.verifier.checks.conditions import _occurrences, _Squashed


def _regex_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """The former implementation: one regex per spelling."""
    chars = [re.escape(c) for c in needle]
    return [m.span() for m in re.finditer(r"\s*".join(chars), text)] if chars else []


_TEXT = st.lists(st.sampled_from([*"ab A股 \t\n项目ß", "(#1)"]), max_size=30).map("".join)


@given(text=_TEXT, needle=st.text(alphabet=st.sampled_from([*"abA股项目ß"]), max_size=4))
def test_squashed_spans_are_the_regex_spans(text: str, needle: str) -> None:
    assert list(_Squashed(text).spans(needle)) == _regex_spans(text, needle)


@given(text=_TEXT, needle=st.text(alphabet=st.sampled_from([*"ab A股"]), max_size=4))
def test_occurrences_are_the_literal_regex_matches(text: str, needle: str) -> None:
    want = [m.start() for m in re.finditer(re.escape(needle), text)] if needle else []
    assert list(_occurrences(text, needle)) == want


def test_no_regex_is_built_from_a_value() -> None:
    assert not hasattr(conditions, "re")  # the module does not use re at all
    long_value = "港" * 100_000
    spans = list(_Squashed("x " + " ".join(long_value) + " y").spans(long_value))
    assert spans == [(2, 2 + 2 * len(long_value) - 1)]
