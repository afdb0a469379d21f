"""A declared product measure (`field` × `times`) against a Python oracle.

On the shop (both dialects, both tenants): revenue = quantity × unit_price per
order line, as an aggregate and per product, every cited line carrying its
revenue and both factors. On a table of its own, both dialects: a row with either
factor missing gives no value, is not counted among the values and is not cited,
as SQL multiplies; a product of SMALLINT or INTEGER columns past their type's
range is computed whole (PostgreSQL would overflow the column's own type).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_TENANTS, Rows

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure


def _lines(rows: Rows, tenant: str) -> list[dict[str, Any]]:
    return [r for r in rows["order_lines"] if r["tenant_id"] == tenant]


def _revenue(line: dict[str, Any]) -> float:
    return float(line["quantity"]) * float(line["unit_price"])


@pytest.mark.parametrize("tenant", SHOP_TENANTS)
def test_the_revenue_is_each_lines_quantity_times_its_price_added_up(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, tenant: str
) -> None:
    engine, rows = shop
    lines = _lines(rows, tenant)
    plan = compile_source("aggregate order_line measure revenue limit 200", shop_catalog, None).plan
    result = execute(plan, shop_catalog, engine, tenant)
    data = dict(result.data)
    # over no one field: the answer names the measure, the rows carry both factors
    assert (data["function"], data["measure"], data["field"]) == ("sum", "revenue", None)
    assert data["value"] == pytest.approx(sum(map(_revenue, lines)))
    assert data["values"] == len(lines)
    by_id = {str(line["id"]): line for line in lines}
    assert {str(r.entity_id) for r in result.rows} == set(by_id)
    for r in result.rows:
        line = by_id[str(r.entity_id)]
        assert r.values["revenue"] == pytest.approx(_revenue(line))
        assert r.values["quantity"] == pytest.approx(float(line["quantity"]))
        assert r.values["unit_price"] == pytest.approx(float(line["unit_price"]))


@pytest.mark.parametrize("tenant", SHOP_TENANTS)
def test_the_revenue_per_product_ranks_the_products(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog, tenant: str
) -> None:
    engine, rows = shop
    lines = _lines(rows, tenant)
    want: dict[str, float] = defaultdict(float)
    for line in lines:
        want[str(line["product_id"])] += _revenue(line)
    source = "breakdown order_line group by product measure revenue limit 3"
    result = execute(compile_source(source, shop_catalog, None).plan, shop_catalog, engine, tenant)
    data = dict(result.data)
    groups = {str(g["keys"][0]): g["value"] for g in data["groups"]}
    top = dict(sorted(want.items(), key=lambda kv: -kv[1])[:3])
    assert groups == pytest.approx(top)
    assert [str(g["keys"][0]) for g in data["groups"]] == list(top)  # largest first
    assert data["total"] == pytest.approx(sum(want.values()))
    assert data["other"] == pytest.approx(sum(want.values()) - sum(top.values()))
    products = {str(line["id"]): str(line["product_id"]) for line in lines}
    for r in result.rows:
        assert products[str(r.entity_id)] in top  # only the shown groups' lines are cited
        assert r.values["revenue"] == pytest.approx(r.values["quantity"] * r.values["unit_price"])


_ITEMS: dict[str, Any] = {
    "entities": {
        "item": {
            "table": "items",
            "tenant": "tenant_id",
            "label": "title",
            "query_types": ["aggregate", "breakdown"],
            "fields": {
                "title": {"column": "title"},
                "kind": {"column": "kind"},
                "qty": {"column": "qty", "type": "number"},
                "price": {"column": "price", "type": "number"},
                "width": {"column": "width", "type": "number"},
                "depth": {"column": "depth", "type": "number"},
            },
            "measures": {
                "worth": {"field": "qty", "times": "price", "function": "sum"},
                "packs": {"field": "qty", "times": "qty", "function": "sum"},
                "area": {"field": "width", "times": "depth", "function": "sum"},
            },
        }
    }
}
# (id, kind, qty SMALLINT, price NUMERIC, width INTEGER, depth INTEGER): rows 2 and 3
# miss a factor of `worth`; 300 × 300 is past SMALLINT, 60000 × 60000 past INTEGER
_ROWS = [
    (1, "a", 2, 1.5, 60000, 60000),
    (2, "a", None, 4.0, 3, 4),
    (3, "b", 300, None, None, 7),
    (4, "b", 1, 10.0, 50000, 70000),
]
_DDL = (
    "CREATE TABLE items (tenant_id VARCHAR(16) NOT NULL, id INTEGER NOT NULL, "
    "title VARCHAR(20), kind VARCHAR(4), qty SMALLINT, price NUMERIC(10, 2), "
    "width INTEGER, depth INTEGER, PRIMARY KEY (tenant_id, id))"
)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def items(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'items.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(_DDL))
        for i, kind, qty, price, width, depth in _ROWS:
            for tenant in ("t1", "t2"):
                conn.execute(
                    sa.text("INSERT INTO items VALUES (:t, :i, :title, :k, :q, :p, :w, :d)"),
                    {"t": tenant, "i": i, "title": f"item {i}", "k": kind}
                    | {"q": qty, "p": price, "w": width, "d": depth},
                )
    if engine.dialect.name == "postgresql":
        secure(engine, catalog_from_mapping(_ITEMS), reader=READER_ROLE, apply=True)
    yield engine
    engine.dispose()


def _run(catalog: Catalog, engine: sa.Engine, source: str) -> dict[str, Any]:
    return dict(execute(compile_source(source, catalog, None).plan, catalog, engine, "t1").data)


def test_a_missing_factor_gives_no_value_and_is_not_cited(items: sa.Engine) -> None:
    catalog = catalog_from_mapping(_ITEMS)
    data = _run(catalog, items, "aggregate item measure worth")
    assert data["value"] == pytest.approx(2 * 1.5 + 1 * 10.0)
    assert data["values"] == 2
    assert set(data["rows"]) == {"1", "4"}
    grouped = _run(catalog, items, "breakdown item group by kind measure worth")
    groups = {g["keys"][0]: g["value"] for g in grouped["groups"]}
    assert groups == pytest.approx({"a": 3.0, "b": 10.0})


def test_a_product_of_integers_does_not_overflow_its_columns_type(items: sa.Engine) -> None:
    catalog = catalog_from_mapping(_ITEMS)
    # 300 × 300 in SMALLINT columns, 60000 × 60000 in INTEGER ones
    assert _run(catalog, items, "aggregate item measure packs")["value"] == 4 + 90000 + 1 + 0
    area = 60000 * 60000 + 3 * 4 + 50000 * 70000
    assert _run(catalog, items, "aggregate item measure area")["value"] == area
    grouped = _run(catalog, items, "breakdown item group by kind measure area")
    groups = {g["keys"][0]: g["value"] for g in grouped["groups"]}
    assert groups == {"a": 60000 * 60000 + 12, "b": 50000 * 70000}
    assert grouped["total"] == area
