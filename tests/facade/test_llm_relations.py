"""The LLM planner is told of the catalog's relations: its prompt lists each
entity's relations and their words, its schema lets a filter name
`relation.field` for every declared path of at most two hops, and nothing else."""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.planner import LLMPlanner
from qdsl.planner.prompt import catalog_summary
from qdsl.planner.schema import catalog_plan_schema, related_fields


def test_the_prompt_lists_relations_and_their_words(shop_catalog: Catalog) -> None:
    summary = catalog_summary(shop_catalog)
    assert "relation customer -> customer (many_to_one; users say: 客户, 顾客, customer)" in summary
    assert "relation payments -> payment (one_to_many" in summary
    prompt = LLMPlanner(str).first_prompt(
        "Which orders are from customers in Berlin?", shop_catalog
    )
    assert summary in prompt and "`<relation>.<field>`" in prompt


def test_the_schema_names_declared_paths_only(shop_catalog: Catalog) -> None:
    names = related_fields(shop_catalog)
    assert {"customer.city", "payments.refunded", "orders.payments.method"} <= set(names)
    # two hops at most, and never a table or key column standing in for a relation
    assert all(n.count(".") <= 2 for n in names)
    assert not any(n.startswith(("customers.", "customer_id.")) for n in names)
    schema = catalog_plan_schema(shop_catalog)
    enum = schema["$defs"]["Filter"]["properties"]["field"]["enum"]
    assert "customer.city" in enum and "city" in enum
    assert "customer.city" not in schema["$defs"]["Sort"]["properties"]["field"]["enum"]


def test_a_catalog_without_relations_has_no_related_names() -> None:
    catalog = demo_catalog()  # declares no relation
    assert related_fields(catalog) == []
    assert "  relation " not in catalog_summary(catalog)


def test_the_schema_groups_across_many_to_one_paths_only(shop_catalog: Catalog) -> None:
    schema = catalog_plan_schema(shop_catalog)
    allowed = set(schema["$defs"]["Grouping"]["properties"]["field"]["enum"])
    assert {"customer", "customer.tier", "order.customer.tier", "product.category"} <= allowed
    # one-to-many paths (an order's lines, a customer's orders) group nothing
    assert not {g for g in allowed if g.split(".")[0] in ("lines", "orders", "payments")}
