"""Projection, sort, blacklist cleansing, limits and retrieval defaults."""

from __future__ import annotations

from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError, PolicyError, QdslError
from qdsl.dsl.ir import (
    Filter,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Sort,
    SortDirection,
    Span,
)
from qdsl.dsl.normalize import DEFAULT_FRESHNESS_DAYS, NormalizedPlan, normalize

CAT = demo_catalog()
SPAN = Span(line=5, column=10, end_line=5, end_column=21, start_pos=70, end_pos=81)


def plan(**kw: Any) -> Plan:
    kw.setdefault("query_type", QueryType.LIST)
    kw.setdefault("entity_type", "project")
    return Plan(**kw)


def error_of(p: Plan) -> dict[str, Any]:
    with pytest.raises(QdslError) as info:
        normalize(p, CAT)
    return info.value.to_dict()


def test_projection_binds_aliases_and_evidence_and_dedupes() -> None:
    p = plan(projection=("project_id", "Title", "evidence", "id", "matched_evidence", "name"))
    assert normalize(p, CAT).plan.projection == ("id", "title", "matched_evidence")


def test_projection_defaults_to_the_entity_default() -> None:
    assert normalize(plan(), CAT).plan.projection == ("id", "title", "status")
    assert normalize(plan(entity_type="task"), CAT).plan.projection == (
        "id",
        "title",
        "status",
        "project_id",
    )


def test_projection_accepts_whitelisted_columns_outside_fields() -> None:
    assert normalize(plan(projection=("summary",)), CAT).plan.projection == ("summary",)


def test_unknown_projection_is_refused_with_a_suggestion() -> None:
    assert error_of(plan(projection=("id", "titel"))) == {
        "type": "validation",
        "subtype": "unknown_field",
        "code": "validation/unknown_field",
        "message": "`titel` is not a projectable field of project",
        "retryable": False,
        "hint": 'did you mean "title"?',
        "details": {
            "path": "projection[1]",
            "entity": "project",
            "field": "titel",
            "suggestions": ["title"],
        },
    }


def test_other_entities_columns_are_unknown_to_the_plan() -> None:
    # `email` is a (sensitive) user column; on project it is simply unknown.
    assert error_of(plan(projection=("email",)))["subtype"] == "unknown_field"


def test_sensitive_projection_is_dropped_with_a_warning() -> None:
    out = normalize(plan(projection=("title", "owner_email", "OWNER_EMAIL")), CAT)
    assert out == NormalizedPlan(
        plan=normalize(plan(projection=("title",)), CAT).plan,
        warnings=(
            "projection `owner_email` dropped: sensitive field of project",
            "projection `OWNER_EMAIL` dropped: sensitive field of project",
        ),
    )


def test_only_sensitive_projection_falls_back_to_the_default() -> None:
    out = normalize(plan(entity_type="config", projection=("secret_value",)), CAT)
    assert out.plan.projection == ("id", "key", "value")
    assert out.warnings == ("projection `secret_value` dropped: sensitive field of config",)


def test_filter_on_a_sensitive_field_is_a_policy_error() -> None:
    p = plan(
        filters=(Filter(field="owner_email", operator=Operator.EQUALS, value="a@b.c", span=SPAN),)
    )
    with pytest.raises(PolicyError) as info:
        normalize(p, CAT)
    assert info.value.to_dict() == {
        "type": "policy",
        "subtype": "sensitive_field",
        "code": "policy/sensitive_field",
        "message": "`owner_email` is a sensitive field of project and cannot be filtered on",
        "retryable": False,
        "hint": "remove `owner_email` from the plan; sensitive fields are never filtered or "
        "sorted on",
        "details": {
            "path": "filters[0].field",
            "line": 5,
            "column": 10,
            "entity": "project",
            "field": "owner_email",
        },
    }


def test_filter_on_a_sensitive_field_is_refused_even_with_a_bad_operator() -> None:
    p = plan(
        entity_type="user", filters=(Filter(field="Email", operator=Operator.CONTAINS, value="x"),)
    )
    assert error_of(p)["code"] == "policy/sensitive_field"


def test_sort_on_a_sensitive_field_is_a_policy_error() -> None:
    p = plan(entity_type="config", sort=(Sort(field="secret_value"),))
    err = error_of(p)
    assert (err["code"], err["message"], err["details"]["path"]) == (
        "policy/sensitive_field",
        "`secret_value` is a sensitive field of config and cannot be sorted on",
        "sort[0].field",
    )


def test_sort_binds_names_and_dedupes_by_field() -> None:
    p = plan(
        sort=(
            Sort(field="name", direction=SortDirection.DESC),
            Sort(field="Created_At"),
            Sort(field="title"),
        )
    )
    assert normalize(p, CAT).plan.sort == (
        Sort(field="title", direction=SortDirection.DESC),
        Sort(field="created_at", direction=SortDirection.ASC),
    )


def test_unknown_sort_field_is_refused_with_suggestions() -> None:
    assert error_of(plan(sort=(Sort(field="created", span=SPAN),))) == {
        "type": "validation",
        "subtype": "unknown_sort_field",
        "code": "validation/unknown_sort_field",
        "message": "`created` is not a sort field of project",
        "retryable": False,
        "hint": 'did you mean "created_at"?',
        "details": {
            "path": "sort[0].field",
            "line": 5,
            "column": 10,
            "entity": "project",
            "field": "created",
            "allowed": ["created_at", "title", "budget"],
            "suggestions": ["created_at"],
        },
    }


def test_a_filterable_field_is_not_a_sort_field() -> None:
    assert error_of(plan(sort=(Sort(field="status"),)))["hint"] == (
        "known sort fields of project: budget, created_at, title"
    )


def test_default_sort_only_for_lists() -> None:
    assert normalize(plan(), CAT).plan.sort == (
        Sort(field="created_at", direction=SortDirection.DESC),
    )
    assert normalize(plan(query_type=QueryType.EXISTENCE), CAT).plan.sort == ()
    # user has no default_sort in the catalog
    assert normalize(plan(entity_type="user"), CAT).plan.sort == ()


def test_limit_defaults_and_is_clamped_with_a_warning() -> None:
    assert normalize(plan(), CAT).plan.limit == 20
    assert normalize(plan(entity_type="doc"), CAT).plan.limit == 5
    assert normalize(plan(limit=200), CAT) == NormalizedPlan(
        plan=normalize(plan(limit=200), CAT).plan
    )
    out = normalize(plan(limit=1_000_000_000), CAT)
    assert out == NormalizedPlan(
        plan=normalize(plan(limit=200), CAT).plan,
        warnings=("limit 1000000000 clamped to 200 (max_limit of project)",),
    )


def test_count_plans_carry_no_limit() -> None:
    assert normalize(plan(query_type=QueryType.COUNT), CAT).plan.limit is None
    out = normalize(plan(query_type=QueryType.COUNT, limit=5), CAT)
    assert (out.plan.limit, out.warnings) == (None, ("limit 5 ignored: a count plan has no limit",))


def test_freshness_window_defaults_when_fresh_facts_are_required() -> None:
    fresh = plan(retrieval_policy=RetrievalPolicy(require_fresh_fact=True))
    assert normalize(fresh, CAT).plan.retrieval_policy == RetrievalPolicy(
        require_fresh_fact=True, freshness_days=DEFAULT_FRESHNESS_DAYS
    )
    given = plan(retrieval_policy=RetrievalPolicy(require_fresh_fact=True, freshness_days=7))
    assert normalize(given, CAT).plan.retrieval_policy.freshness_days == 7
    assert normalize(plan(), CAT).plan.retrieval_policy == RetrievalPolicy()


def test_projection_error_is_a_plan_error() -> None:
    with pytest.raises(PlanError):
        normalize(plan(projection=("nope",)), CAT)
