"""Filter value shapes and value normalization."""

from __future__ import annotations

from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, Value
from qdsl.dsl.normalize import normalize

CAT = demo_catalog()


def plan(entity: str, *filters: Filter) -> Plan:
    return Plan(query_type=QueryType.LIST, entity_type=entity, filters=filters)


def normalized(entity: str, field: str, op: str, value: Value) -> Value:
    out = normalize(plan(entity, Filter(field=field, operator=Operator(op), value=value)), CAT).plan
    return out.filters[0].value


def refusal(entity: str, field: str, op: str, value: Value) -> dict[str, Any]:
    with pytest.raises(PlanError) as info:
        normalize(plan(entity, Filter(field=field, operator=Operator(op), value=value)), CAT)
    return info.value.to_dict()


@pytest.mark.parametrize(
    ("entity", "field", "op", "value", "expected"),
    [
        # enum values through the field's aliases, casefolded and width-folded
        ("project", "status", "equals", "ACTIVE", "active"),
        ("project", "status", "equals", "进行中", "active"),
        ("project", "status", "equals_or_alias", "On Hold", "paused"),
        ("project", "status", "in", ("已关闭", "closed", "running"), ("closed", "active")),
        ("task", "status", "equals", "进行中", "doing"),
        ("run", "status", "not_in", ("失败",), ("failed",)),
        # equals_or_alias on a field with aliases: the catalog's canonical key as written
        ("project", "market_theme", "equals_or_alias", "A-share", "A股"),
        ("project", "market_theme", "equals_or_alias", " 沪深A股 ", "A股"),
        ("project", "market_theme", "equals_or_alias", "ａ股", "A股"),
        ("project", "market_theme", "equals_or_alias", "hk STOCKS", "港股"),
        ("project", "market_theme", "equals_or_alias", "Crypto  Coins", "crypto coins"),
        # plain equals on an aliased text field does not canonicalize, it normalizes
        ("project", "market_theme", "equals", "A-Share", "a-share"),
        ("project", "title", "contains", "  Ｇａｔｅ  Design ", "gate design"),
        ("run", "error", "equals_or_alias", "Timeout", "timeout"),
        # ids are strings; numbers and dates stay as written
        ("project", "id", "equals", 64, "64"),
        ("task", "project_id", "in", (64, "64", "65"), ("64", "65")),
        ("project", "budget", "between", (10, 20.5), (10, 20.5)),
        ("signal", "severity", "gte", 3, 3),
        ("project", "created_at", "gt", "2026-01-01", "2026-01-01"),
        ("project", "created_at", "lt", "2026-01-01T08:00:00+08:00", "2026-01-01T08:00:00+08:00"),
        ("task", "due_at", "is_null", False, False),
    ],
)
def test_values_normalize(entity: str, field: str, op: str, value: Value, expected: Value) -> None:
    assert normalized(entity, field, op, value) == expected


def test_unknown_enum_value_is_refused_with_suggestions() -> None:
    assert refusal("project", "status", "equals", "actve") == {
        "type": "validation",
        "subtype": "unknown_value",
        "code": "validation/unknown_value",
        "message": "'actve' is not a value of project.status",
        "retryable": False,
        "hint": 'did you mean "active"?',
        "details": {
            "path": "filters[0].value",
            "entity": "project",
            "field": "status",
            "operator": "equals",
            "value": "actve",
            "allowed": ["active", "paused", "closed"],
            "suggestions": ["active"],
        },
    }


def test_unknown_enum_value_inside_a_list_names_its_element() -> None:
    err = refusal("task", "status", "in", ("done", "nonsense"))
    assert err["details"]["path"] == "filters[0].value[1]"
    assert err["hint"] == "known values of task.status: blocked, doing, done, todo"


def test_in_needs_a_non_empty_list() -> None:
    assert refusal("project", "status", "in", "active") == {
        "type": "validation",
        "subtype": "invalid_value",
        "code": "validation/invalid_value",
        "message": "`in` takes a non-empty list of values",
        "retryable": False,
        "hint": 'write the values as a list, e.g. in ("a", "b")',
        "details": {
            "path": "filters[0].value",
            "entity": "project",
            "field": "status",
            "operator": "in",
            "value": "active",
        },
    }
    assert refusal("project", "status", "not_in", ())["subtype"] == "invalid_value"


def test_between_needs_two_ordered_values() -> None:
    assert refusal("project", "budget", "between", (1, 2, 3))["message"] == (
        "`between` takes exactly two values, low and high"
    )
    assert refusal("project", "budget", "between", (20, 10)) == {
        "type": "validation",
        "subtype": "invalid_value",
        "code": "validation/invalid_value",
        "message": "`between` bounds are out of order: 20 > 10",
        "retryable": False,
        "hint": "write the low bound first",
        "details": {
            "path": "filters[0].value",
            "entity": "project",
            "field": "budget",
            "operator": "between",
            "value": [20, 10],
        },
    }
    # a date and a datetime on the same axis compare (naive read as UTC)
    assert normalized(
        "project", "created_at", "between", ("2026-01-01", "2026-01-01T00:00:00+00:00")
    ) == ("2026-01-01", "2026-01-01T00:00:00+00:00")
    err = refusal("project", "created_at", "between", ("2026-02-01", "2026-01-01"))
    assert err["message"] == "`between` bounds are out of order: '2026-02-01' > '2026-01-01'"


def test_is_null_takes_a_bool() -> None:
    err = refusal("task", "due_at", "is_null", "yes")
    assert err["message"] == "`is_null` takes true (is null) or false (is not null)"


def test_scalar_operators_take_one_value() -> None:
    err = refusal("project", "budget", "gt", (1, 2))
    assert (err["message"], err["details"]["path"]) == (
        "`gt` takes a single value",
        "filters[0].value",
    )
    assert refusal("project", "budget", "gt", None)["subtype"] == "invalid_value"


@pytest.mark.parametrize(
    ("entity", "field", "op", "value", "path", "expected"),
    [
        ("project", "budget", "gt", "100", "filters[0].value", "number"),
        ("project", "budget", "gt", True, "filters[0].value", "number"),
        ("project", "budget", "gt", float("nan"), "filters[0].value", "number"),
        ("project", "budget", "between", (1, "x"), "filters[0].value[1]", "number"),
        ("project", "created_at", "gt", "yesterday", "filters[0].value", "datetime"),
        ("project", "created_at", "gt", 20260101, "filters[0].value", "datetime"),
        ("project", "status", "equals", 3, "filters[0].value", "enum"),
        ("project", "title", "equals", "   ", "filters[0].value", "text"),
        ("project", "id", "equals", True, "filters[0].value", "id"),
    ],
)
def test_value_type_must_fit_the_field(  # noqa: PLR0917
    entity: str, field: str, op: str, value: Value, path: str, expected: str
) -> None:
    err = refusal(entity, field, op, value)
    assert (err["subtype"], err["details"]["path"], err["details"]["expected"]) == (
        "invalid_value",
        path,
        expected,
    )


def test_invalid_number_error_whole() -> None:
    assert refusal("project", "budget", "gt", "100") == {
        "type": "validation",
        "subtype": "invalid_value",
        "code": "validation/invalid_value",
        "message": "project.budget is a number field, '100' is not a finite number",
        "retryable": False,
        "hint": "give a finite number",
        "details": {
            "path": "filters[0].value",
            "entity": "project",
            "field": "budget",
            "operator": "gt",
            "value": "100",
            "expected": "number",
        },
    }
