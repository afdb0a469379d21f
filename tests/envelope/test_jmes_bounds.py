"""Every JMESPath a caller writes is bounded (issue 25, F3 / F7).

Length and nesting are refused before jmespath's recursive parser runs; what
an expression builds is counted while it is evaluated, so `[@,@]` repeated
(which shares its parts: small in memory, exponential once printed) is
stopped within the budget, and so is a projection piling up results each
within it; a function that outgrows its arguments is stopped before it
runs; the clock stops a slow one. A selection of the document itself is
never refused, whatever its size (Hypothesis: the bounded search equals
jmespath's own on selections).
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.dsl.errors import QdslError, UsageError
from qdsl.envelope import jmes
from qdsl.envelope.jmes import nesting_estimate, search

DOC = {"data": {"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(50)]}}
DOC_BYTES = len(json.dumps(DOC))


def code_of(expression: str, document: Any = DOC, **kwargs: Any) -> str:
    with pytest.raises(UsageError) as caught:
        search(expression, document, **kwargs)
    return caught.value.code


# Each nests the parser or the interpreter once or more per repetition; 3,000
# deep was RecursionError (exit 1 on the CLI, an internal error over MCP).
DEEP = {
    "brackets": "[" * 1500 + "@" + "]" * 1500,
    "parens": "(" * 1500 + "@" + ")" * 1500,
    "objects": "{a:" * 1000 + "@" + "}" * 1000,
    "not": "!" * 3000 + "@",
    "projections": "@" + "[*]" * 1300,
    "flatten": "@" + "[]" * 2000,
    "filters": "@" + "[?@]" * 1000,
    "value projections": "@" + ".*" * 2000,
    "functions": "abs(" * 800 + "@" + ")" * 800,
    "pipes": "@" + "|@" * 2000,
    "ors": "@" + "||@" * 1300,
    "a JSON literal": "`" + "[" * 2000 + "]" * 2000 + "`",
    "after an open string literal": '`"` ' + "[" * 2000,
}


@pytest.mark.parametrize("expression", DEEP.values(), ids=DEEP.keys())
def test_deep_expressions_are_refused_before_the_parser_runs(
    expression: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def parser_must_not_run(_expression: str) -> Any:
        raise AssertionError("the parser ran on an expression over the depth limit")

    if nesting_estimate(expression) > 64:  # left-deep chains are deep only once parsed
        monkeypatch.setattr(jmes, "_parse", parser_must_not_run)
    assert code_of(expression) == "usage/jmespath_depth_exceeded"


def test_an_expression_over_the_length_limit_is_refused() -> None:
    assert code_of("data." + "a" * 5000) == "usage/jmespath_chars_exceeded"


def test_nesting_in_strings_is_not_nesting() -> None:
    for quoted in ("'" + "[" * 500 + "'", '"' + "[" * 500 + '"', '`"' + "[" * 500 + '"`'):
        assert nesting_estimate(quoted) <= 1
        search(quoted, DOC)  # parses and runs: a string is no nesting


@pytest.mark.parametrize("steps", [16, 19, 40])
def test_doubling_is_stopped_while_it_builds(steps: int) -> None:
    """`@|[@,@]` x 19 was gigabytes (the process died); x 16 a 219 MB ref."""
    tracemalloc.start()
    try:
        assert code_of("@" + "|[@,@]" * steps) == "usage/jmespath_result_bytes_exceeded"
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, peak


def test_a_projection_cannot_pile_up_what_each_element_may_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each element's string within the budget, all of them together over it: the
    projection stops as the sum passes it, not once it holds them all."""
    monkeypatch.setenv("QDSL_MAX_JMESPATH_RESULT_BYTES", str(1024 * 1024))
    shared = {"text": "x" * 9000}
    document = {"data": [shared] * 200}
    wide = "[" + ",".join(["@"] * 100) + "]"  # about 900 KB of text per element
    tracemalloc.start()
    try:
        code = code_of(f"data[*].to_string({wide})", document)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == "usage/jmespath_result_bytes_exceeded"
    assert peak < 16 * 1024 * 1024, peak  # all 200 would be 180 MB


def test_join_with_a_long_separator_is_refused_before_it_runs() -> None:
    many = {"data": [""] * 100_000}
    tracemalloc.start()
    try:
        code = code_of("join('" + "x" * 4000 + "', data)", many)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == "usage/jmespath_result_bytes_exceeded"
    assert peak < 64 * 1024 * 1024, peak  # the join itself would be 400 MB


def test_a_slow_expression_is_stopped_by_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Comparing two values built apart walks them whole: each comparison is within
    the size budget (raised here), a thousand of them take many minutes."""
    monkeypatch.setenv("QDSL_MAX_JMESPATH_MS", "200")
    monkeypatch.setenv("QDSL_MAX_JMESPATH_RESULT_BYTES", str(64 * 1024 * 1024))
    big = "(@" + "|[@,@]" * 20 + ")"
    items = {"data": [[1, 2, 3]] * 1000}
    assert code_of(f"data[*].[{big} == {big}]", items) == "usage/jmespath_ms_exceeded"


def test_a_selection_of_a_large_document_is_never_refused() -> None:
    big = {"data": {"rows": [{"id": i, "text": "x" * 200} for i in range(40_000)]}}
    size = len(json.dumps(big))
    assert size > 4 * 1024 * 1024  # over the build budget alone
    assert search("data", big, document_bytes=size) is big["data"]
    assert len(search("data.rows[*].id", big, document_bytes=size)) == 40_000
    assert len(search("data.rows[*]", big, document_bytes=size)) == 40_000
    # twice the document is over its own bytes plus the budget
    assert code_of("[data, data]", big, document_bytes=size) == (
        "usage/jmespath_result_bytes_exceeded"
    )


def test_a_value_over_the_ref_store_caps_is_refused() -> None:
    assert code_of("data", DOC, document_bytes=DOC_BYTES, store_bytes=100) == (
        "usage/result_over_ref_cap"
    )
    assert search("data.items[0].id", DOC, document_bytes=DOC_BYTES, store_bytes=100) == 0


def test_limits_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDSL_MAX_JMESPATH_CHARS", "10")
    with pytest.raises(QdslError) as caught:
        search("data.items[0]", DOC)
    assert caught.value.details["setting"].startswith("QDSL_MAX_JMESPATH_CHARS")
    monkeypatch.setenv("QDSL_MAX_JMESPATH_CHARS", "4096")
    monkeypatch.setenv("QDSL_MAX_JMESPATH_DEPTH", "2")
    assert code_of("[[[@]]]") == "usage/jmespath_depth_exceeded"


# Selections: paths, indexes, slices, projections and filters over the document.
_NAMES = st.sampled_from(["data", "items", "id", "name", "tags", "rows"])
_STEPS = st.one_of(
    _NAMES.map(lambda n: "." + n),
    st.integers(-3, 60).map(lambda i: f"[{i}]"),
    st.sampled_from(["[*]", "[]", "[0:10]", "[::2]", ".*", "[?id > `10`]", "| [0]"]),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_NAMES, inner, max_size=6),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(document=st.one_of(st.just(DOC), _JSON), steps=st.lists(_STEPS, max_size=6))
def test_selections_answer_what_jmespath_answers(document: Any, steps: list[str]) -> None:
    expression = "@" + "".join(steps)
    try:
        expected = jmespath.search(expression, document)
    except (jmespath.exceptions.JMESPathError, TypeError):  # TypeError: "" > 10
        assert code_of(expression, document) == "usage/bad_expression"
        return
    size = len(json.dumps(document))
    assert search(expression, document, document_bytes=size) == expected
