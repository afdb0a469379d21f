"""The IR's direct copy with changes is pydantic's `model_copy`, attribute for attribute."""

from __future__ import annotations

from pydantic import BaseModel

from qdsl.dsl import ir
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, Scope


def _state(model: BaseModel) -> tuple[object, ...]:
    return (
        dict(vars(model)),
        model.__pydantic_extra__,
        set(model.__pydantic_fields_set__),
        model.__pydantic_private__,
    )


def test_the_direct_copy_is_on_for_this_pydantic() -> None:
    # Off only when pydantic's instance layout changed; then every copy is pydantic's.
    assert ir._FAST_COPY


def test_a_copy_with_changes_equals_pydantics_and_leaves_the_original() -> None:
    plan = Plan(
        query_type=QueryType.LIST,
        entity_type="e",
        filters=(Filter(field="f", operator=Operator.EQUALS, value="v"),),
        limit=3,
    )
    before = _state(plan)
    for update in (
        {"limit": 7},
        {"scope": Scope(tenant_id="t"), "projection": ("a", "b")},
        {"entity_type": "other", "limit": None},
    ):
        ours = plan.model_copy(update=update)
        theirs = BaseModel.model_copy(plan, update=update)
        assert type(ours) is Plan
        assert _state(ours) == _state(theirs)
        assert ours == theirs and hash(ours) == hash(theirs)
    assert _state(plan) == before
    assert plan.model_copy() == plan and plan.model_copy(deep=True) == plan
