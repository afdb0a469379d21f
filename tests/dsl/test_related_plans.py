"""Plans naming a field of a related entity (`customer.city` on orders): text and
JSON forms alike, bound through declared relations only, refused with a typed
error and a did-you-mean otherwise. Checked on the shop and on a second catalog
whose relations have other names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text


def bound(plan: str, catalog: Catalog) -> Plan:
    return normalize(parse_text(plan), catalog, PlanContext(tenant_id="t")).plan


def refusal(plan: str, catalog: Catalog) -> PlanError:
    with pytest.raises(PlanError) as info:
        bound(plan, catalog)
    return info.value


def test_text_and_json_forms_carry_the_path(shop_catalog: Catalog) -> None:
    plan = parse_text('list order where customer.city = "Berlin"')
    assert plan.filters[0].field == "customer.city"
    assert parse_text(to_text(plan)) == plan
    again = Plan.model_validate_json(json.dumps(plan.to_json_dict()))
    assert again == plan


def test_many_to_one_one_to_many_and_two_hops_bind(shop_catalog: Catalog) -> None:
    assert bound('list order where customer.city = "Berlin"', shop_catalog).filters[0].value == (
        "berlin"
    )
    # an enum value of the related field is bound by that field's aliases
    plan = bound('list customer where orders.status = "已取消"', shop_catalog)
    assert plan.filters[0].field == "orders.status"
    assert plan.filters[0].value == "cancelled"
    plan = bound("count customer where orders.payments.refunded = true", shop_catalog)
    assert plan.filters[0].field == "orders.payments.refunded"


def test_a_relation_synonym_binds_to_its_name(shop_catalog: Catalog) -> None:
    plan = bound('list order where 客户.city = "Berlin"', shop_catalog)
    assert plan.filters[0].field == "customer.city"
    # and normalizing again changes nothing
    assert normalize(plan, shop_catalog, PlanContext(tenant_id="t")).plan == plan


def test_an_unknown_relation_is_refused_with_a_did_you_mean(shop_catalog: Catalog) -> None:
    error = refusal('list order where customr.city = "Berlin"', shop_catalog)
    assert error.code == "validation/unknown_relation"
    assert "customer" in (error.hint or "")
    assert error.details["path"] == "filters[0].field"


def test_a_path_past_two_hops_is_refused(shop_catalog: Catalog) -> None:
    error = refusal('list order_line where order.customer.orders.number = "x"', shop_catalog)
    assert error.code == "validation/relation_path_too_long"


def test_a_table_or_column_is_not_a_relation(shop_catalog: Catalog) -> None:
    for plan in (
        'list order where customers.city = "Berlin"',  # the table
        'list order where customer_id.city = "Berlin"',  # the key column
        'list payment where order.customer.city = "Berlin" and orders.id = "1"',
    ):
        assert refusal(plan, shop_catalog).code == "validation/unknown_relation", plan


def test_an_unknown_field_of_the_related_entity(shop_catalog: Catalog) -> None:
    error = refusal('list order where customer.citty = "Berlin"', shop_catalog)
    assert error.code == "validation/unknown_field"
    assert "city" in (error.hint or "")


def test_an_operator_the_related_field_does_not_allow(shop_catalog: Catalog) -> None:
    error = refusal('list order where customer.city > "Berlin"', shop_catalog)
    assert error.code == "validation/operator_not_allowed"


def _second_catalog(sensitive: bool = False) -> Catalog:
    data: dict[str, Any] = {
        "entities": {
            "ward": {
                "table": "wards",
                "id": "ward_no",
                "tenant": "org",
                "label": "title",
                "query_types": ["list", "count"],
                "fields": {
                    "floor": {"column": "floor", "type": "number", "operators": ["equals", "gt"]},
                    "secret_note": {
                        "column": "note",
                        "type": "text",
                        "operators": ["equals"],
                        "sensitive": sensitive,
                    },
                },
            },
            "bed": {
                "table": "beds",
                "id": "bed_no",
                "tenant": "org",
                "label": "code",
                "query_types": ["list", "count"],
                "fields": {
                    "kind": {"column": "kind", "type": "text", "operators": ["equals"]},
                },
                "relations": {"in_ward": {"entity": "ward", "key": "ward_ref", "inverse": "beds"}},
            },
        }
    }
    return catalog_from_mapping(data)


def test_another_catalog_binds_its_own_relation_names() -> None:
    catalog = _second_catalog()
    assert bound("list bed where in_ward.floor > 2", catalog).filters[0].field == "in_ward.floor"
    assert bound('count ward where beds.kind = "icu"', catalog).filters[0].field == "beds.kind"
    assert refusal("list bed where ward.floor > 2", catalog).code == "validation/unknown_relation"


def test_a_sensitive_field_of_the_related_entity_is_unreachable() -> None:
    catalog = _second_catalog(sensitive=True)
    error = refusal('list bed where in_ward.secret_note = "x"', catalog)
    assert error.code in {"validation/unknown_field", "policy/sensitive_field"}
    assert "secret_note" not in (error.hint or "")


@pytest.mark.parametrize(
    "condition",
    ['contains "Fe"', '= "Felix"', '!= "x"', '~= "x"', 'in ("a", "b")', 'not in ("a")'],
)
def test_every_operator_parses_after_a_path_beside_a_grouping_path(condition: str) -> None:
    # a grouping's path may be followed by a grain name: a filter's path never is
    plan = parse_text(f"breakdown order where customer.name {condition} group by customer.tier")
    assert plan.filters[0].field == "customer.name"
    assert plan.group_by[0].field == "customer.tier"
