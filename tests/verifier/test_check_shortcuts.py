"""The checks' shortcuts decide exactly as the full reading does.

- no_total_count_substitution reads the shields (ids, dates, labels, keys)
  only when some number in the text has the total's value: `_states` equals
  `total in stated_numbers` for any text, rows and amount.
- covers_conditions maps a spelling found in the text without whitespace back
  by runs of whitespace: the spans equal a character-by-character map.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from verifier_cases import A_SHARE, context, existence_result, plan, rendered, row

from qdsl.dsl.ir import QueryType
from qdsl.verifier.checks.base import Subject
from qdsl.verifier.checks.conditions import _Squashed, squash
from qdsl.verifier.checks.counts import _states, stated_numbers

EXISTS = plan(QueryType.EXISTENCE, A_SHARE)

pieces = st.sampled_from(
    [
        "有 ",
        "137",
        "64",
        " 个项目",
        "一百三十七个",
        "one hundred and thirty-seven",
        "fourteen",
        "项目 64",
        "(#64)",
        "[fact:1]",
        "2026-11-01",
        "预算：",
        ": ",
        "，",
        " ",
        "\n",
        "A股",
        "project 12",
    ]
)
labels = st.sampled_from(["137", "64", "一百三十七", "A股平台", "Plan 14", ""])


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(pieces | st.text(max_size=3), max_size=10),
    row_labels=st.lists(labels, max_size=3),
    amount=st.sampled_from([137, 64, 14, 12, 2026]) | st.integers(0, 200),
)
def test_states_agrees_with_stated_numbers(
    parts: list[str], row_labels: list[str], amount: int
) -> None:
    rows = tuple(row(str(60 + k), label, (f"fact:{k}",)) for k, label in enumerate(row_labels))
    result = existence_result(rows=rows)
    answer = rendered(EXISTS, result).model_copy(update={"text": "".join(parts)})
    s = Subject(plan=EXISTS, result=result, answer=answer, context=context())
    assert _states(s, amount) == (amount in stated_numbers(s))


def _old_spans(text: str, needle: str) -> Iterator[tuple[int, int]]:
    places = [i for i, c in enumerate(text) if not c.isspace()]
    squashed = "".join(text[i] for i in places)
    at = squashed.find(needle) if needle else -1
    while at >= 0:
        yield places[at], places[at + len(needle) - 1] + 1
        at = squashed.find(needle, at + len(needle))


spaced = st.text(st.sampled_from(list("ab股 \t\n\u3000\u00a0")), max_size=24)


@settings(max_examples=500, deadline=None)
@given(text=spaced, needle=st.text(st.sampled_from(list("ab股")), max_size=3))
def test_squashed_spans_match_a_map_of_every_character(text: str, needle: str) -> None:
    squashed = _Squashed(text)
    assert squashed.text == "".join(c for c in text if not c.isspace())
    assert list(squashed.spans(needle)) == list(_old_spans(text, needle))


@given(text=st.text())
def test_a_squashed_spelling_holds_no_whitespace(text: str) -> None:
    """covers_conditions finds `squash(spelling)` in the text without whitespace."""
    assert not any(c.isspace() for c in squash(text))
