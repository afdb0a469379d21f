"""The JSON nesting bound refuses exactly the plans nested past the limit.

`check_json_depth` skips its scan when the text has no more opening brackets
than the limit; property: for any JSON text (brackets inside strings too) it
refuses exactly when the real nesting depth exceeds the limit, the depth
json.loads itself sees.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.limits import Limits, check_json_depth

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text("[]{}\"\\ab", max_size=6))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text("[]{}ab", max_size=3), inner, max_size=3),
    ),
    max_leaves=25,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@given(doc=documents, limit=st.integers(1, 8))
def test_refused_exactly_past_the_limit(doc: Any, limit: int) -> None:
    text = json.dumps(doc)
    lim = Limits(json_depth=limit)
    if depth(doc) > limit:
        with pytest.raises(UsageError):
            check_json_depth(text, "the plan", lim)
    else:
        check_json_depth(text, "the plan", lim)
