"""An IR copy with changes (`model_copy(update=...)`, what the normalizer makes):
the changes and nothing else, frozen, equal to the node built with those values,
and the original untouched."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, Scope, Span


def _plan(**changes: Any) -> Plan:
    fields: dict[str, Any] = {
        "query_type": QueryType.LIST,
        "entity_type": "e",
        "filters": (Filter(field="f", operator=Operator.EQUALS, value="v"),),
        "limit": 3,
    }
    return Plan(**{**fields, **changes})


UPDATES: list[dict[str, Any]] = [
    {"limit": 7},
    {"scope": Scope(tenant_id="t"), "projection": ("a", "b")},
    {"entity_type": "other", "limit": None},
]


@pytest.mark.parametrize("update", UPDATES)
def test_a_copy_with_changes_is_the_node_built_with_them(update: dict[str, Any]) -> None:
    plan = _plan()
    before = (plan.model_dump(), set(plan.model_fields_set))
    copy = plan.model_copy(update=update)
    built = _plan(**update)
    assert type(copy) is Plan
    assert copy == built and hash(copy) == hash(built)
    assert copy.model_dump() == built.model_dump()
    assert copy.model_fields_set == plan.model_fields_set | update.keys()
    assert (plan.model_dump(), set(plan.model_fields_set)) == before
    assert copy != plan


def test_a_copy_is_frozen_like_the_original() -> None:
    copy = _plan().model_copy(update={"limit": 9})
    with pytest.raises(ValidationError):
        copy.limit = 10  # type: ignore[misc]
    assert copy.limit == 9


def test_copies_without_changes_and_deep_copies_equal_the_original() -> None:
    plan = _plan(span=Span(line=1, column=1, end_line=1, end_column=5, start_pos=0, end_pos=4))
    assert plan.model_copy() == plan and plan.model_copy(deep=True) == plan
    assert plan.model_copy(update={"span": None}) == plan  # spans are provenance
    assert plan.model_copy(update={"span": None}).span is None
