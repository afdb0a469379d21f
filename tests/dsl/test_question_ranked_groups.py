"""A declared measure ranked over a related entity, read as a breakdown: "Top 5
products by revenue" on the shop (revenue = quantity × unit_price), and the same
rule on a fleet catalog of its own (trips of drivers): grouped by the one
many-to-one path to the entity named, limited to the number asked. A ranking from
the lowest, no number, two paths to the entity or a measure of another entity stay
problems: no breakdown on a guess."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.ir import QueryType
from qdsl.dsl.question import read_question

_FLEET: dict[str, Any] = {
    "entities": {
        "driver": {
            "table": "drivers",
            "tenant": "tenant_id",
            "label": "name",
            "query_types": ["count", "list", "breakdown"],
            "synonyms": ["driver", "drivers", "司机"],
            "fields": {"name": {"column": "name"}},
        },
        "trip": {
            "table": "trips",
            "tenant": "tenant_id",
            "label": "code",
            "query_types": ["count", "list", "aggregate", "breakdown"],
            "synonyms": ["trip", "trips", "行程"],
            "fields": {
                "code": {"column": "code"},
                "driver_id": {"column": "driver_id", "type": "id", "references": "driver"},
                "km": {"column": "km", "type": "number", "synonyms": ["km"]},
                "rate": {"column": "rate", "type": "number", "synonyms": ["rate"]},
            },
            "measures": {
                "fares": {
                    "field": "km",
                    "times": "rate",
                    "function": "sum",
                    "synonyms": ["fares", "车费"],
                },
                "distance": {"field": "km", "function": "sum", "synonyms": ["distance", "里程"]},
            },
            "relations": {
                "driver": {
                    "entity": "driver",
                    "key": "driver_id",
                    "synonyms": ["driver", "司机"],
                    "inverse": "trips",
                }
            },
        },
    }
}
FLEET = catalog_from_mapping(_FLEET)


def _two_paths() -> Catalog:
    """The fleet with a second relation to the drivers: no one path to group by."""
    raw = copy.deepcopy(_FLEET)
    trip = raw["entities"]["trip"]
    trip["fields"]["relief_id"] = {"column": "relief_id", "type": "id"}
    trip["relations"]["relief"] = {"entity": "driver", "key": "relief_id", "inverse": "reliefs"}
    return catalog_from_mapping(raw)


# (catalog, question, (entity, group_by, measure, limit))
RANKED = [
    ("shop", "Top 5 products by revenue", ("order_line", "product", "revenue", 5)),
    ("shop", "销售额最高的 5 个商品", ("order_line", "product", "revenue", 5)),
    ("shop", "Top 3 orders by revenue", ("order_line", "order", "revenue", 3)),
    ("shop", "Top 5 customers by revenue", ("order_line", "order.customer", "revenue", 5)),
    ("shop", "销量最高的 3 个商品", ("order_line", "product", "units_sold", 3)),
    ("fleet", "Top 3 drivers by fares", ("trip", "driver", "fares", 3)),
    ("fleet", "车费最高的 3 个司机", ("trip", "driver", "fares", 3)),
    ("fleet", "Top 2 drivers by distance", ("trip", "driver", "distance", 2)),
    ("fleet", "里程最高的 2 个司机", ("trip", "driver", "distance", 2)),
]


@pytest.mark.parametrize(("catalog", "question", "want"), RANKED)
def test_a_measure_ranked_over_a_related_entity_is_a_breakdown(
    shop_catalog: Catalog, catalog: str, question: str, want: tuple[str, str, str, int]
) -> None:
    entity, group_by, measure, limit = want
    r = read_question(question, shop_catalog if catalog == "shop" else FLEET)
    assert r.understood, r.problems
    assert (r.query_type, r.entity, r.measure, r.limit) == (
        QueryType.BREAKDOWN,
        entity,
        measure,
        limit,
    )
    assert r.group_by == ((group_by, None),)
    assert r.sort == ()  # a breakdown ranks its groups by their value


@pytest.mark.parametrize(
    ("catalog", "question"),
    [
        ("shop", "销售额最低的 5 个商品"),  # from the lowest: no breakdown ranks so
        ("fleet", "车费最低的 3 个司机"),
        ("fleet", "Top drivers by fares"),  # no number of groups
        ("two_paths", "Top 3 drivers by fares"),  # the driver, or the relief driver?
        ("two_paths", "车费最高的 3 个司机"),
    ],
)
def test_a_ranking_the_rule_cannot_state_stays_a_problem(
    shop_catalog: Catalog, catalog: str, question: str
) -> None:
    chosen = {"shop": shop_catalog, "fleet": FLEET}.get(catalog) or _two_paths()
    r = read_question(question, chosen)
    assert not r.understood, r
    assert r.query_type is not QueryType.BREAKDOWN or not r.group_by
