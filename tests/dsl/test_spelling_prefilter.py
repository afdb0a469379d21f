"""The cheap prefilter of the question reader never hides a spelling that is there.

`lexicon.present` / `could_match` skip a catalog spelling when the question,
spaces and hyphens removed, does not contain the spelling likewise squeezed; the
spelling's pattern is then never run. Property: whenever the pattern finds the
spelling in a (normalized) text, the prefilter lets it through, for spellings
and texts of CJK, Latin letters, digits, spaces and hyphens, with the spelling
written into the text with spaces and hyphens where the pattern allows them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.dsl.question.lexicon import compiled, could_match, find, present, squeeze
from qdsl.dsl.textnorm import normalize_text

ALPHABET = "A股港美项目状态abcxyz019 -_"
spellings = st.text(ALPHABET, min_size=1, max_size=6)
texts = st.text(ALPHABET + "的有没多少,.", max_size=20)


@st.composite
def written(draw: st.DrawFn, spelling: str) -> str:
    """The spelling as a user might type it: spaces or hyphens between characters."""
    out = []
    for ch in spelling:
        out.append(ch)
        out.append(draw(st.sampled_from(["", "", " ", "-", "  "])))
    return "".join(out)


@settings(max_examples=400)
@given(data=st.data(), spelling=spellings, before=texts, after=texts)
def test_the_prefilter_passes_every_spelling_the_pattern_finds(
    data: st.DataObject, spelling: str, before: str, after: str
) -> None:
    text = normalize_text(before + data.draw(written(spelling)) + after)
    squeezed = squeeze(text)
    if not normalize_text(spelling):
        return
    if compiled(spelling).search(text):
        assert could_match(spelling, squeezed)
        assert spelling in present({spelling: None}, squeezed)
    # find() with and without the prefilter's squeezed text agree
    assert list(find(text, spelling, squeezed)) == [
        (m.start(), m.end()) for m in compiled(spelling).finditer(text) if m.end() > m.start()
    ]


@given(spellings=st.lists(spellings, max_size=8, unique=True), text=texts)
def test_present_keeps_the_mapping_order(spellings: list[str], text: str) -> None:
    mapping = dict.fromkeys(spellings)
    squeezed = squeeze(normalize_text(text))
    assert present(mapping, squeezed) == [s for s in spellings if could_match(s, squeezed)]
