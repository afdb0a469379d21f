"""Conditions across declared relations, on the shop (tests/deployments/shop/), SQLite
and PostgreSQL: the executor's answer equals a Python oracle over the rows, for
every value each condition can take and both tenants. Ids are unique per tenant
only, so a related row of the other tenant shares its id with one of ours: the
oracle that ignores the tenant on related rows answers differently, and the
executor must never agree with it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_TENANTS, Rows, reached
from test_golden_sql import assert_golden

from qdsl.dsl.catalog import Catalog, relation_path
from qdsl.dsl.plan.parser import parse_text
from qdsl.executor.compile import compile_plan
from qdsl.executor.run import execute


def oracle(
    catalog: Catalog,
    rows: Rows,
    entity: str,
    path: str,
    test: Callable[[Any], bool],
    *,
    tenant: str,
    same_tenant: bool = True,
) -> set[str]:
    """Ids of the tenant's `entity` rows some row at the end of `path` satisfies."""
    *names, column = path.split(".")
    steps = relation_path(catalog, entity, names)
    spec = catalog.entities[steps[-1].target].fields[column]
    return {
        str(row["id"])
        for row in rows[catalog.entities[entity].table]
        if row["tenant_id"] == tenant
        and any(test(r[spec.column]) for r in reached(rows, row, steps, same_tenant=same_tenant))
    }


def answer(plan: str, catalog: Catalog, engine: sa.Engine, tenant: str) -> set[str]:
    result = execute(parse_text(plan), catalog, engine, tenant)
    assert result.tenant_id == tenant
    assert all(r.tenant_id == tenant for r in result.rows)
    assert result.count == len(result.rows), "the test reads every match"
    return {r.entity_id for r in result.rows}


def lower(value: object) -> Callable[[Any], bool]:
    return lambda v: str(v).casefold() == str(value).casefold()


def cases(rows: Rows) -> Iterator[tuple[str, str, str, Callable[[Any], bool]]]:
    """(entity, path, condition text, oracle test) for every value in the data."""
    for city in sorted({r["city"] for r in rows["customers"]}):
        yield "order", "customer.city", f'= "{city}"', lower(city)
        yield (
            "order",
            "customer.city",
            f'!= "{city}"',
            lambda v, c=city: str(v).casefold() != c.casefold(),
        )
        yield "order_line", "order.customer.city", f'= "{city}"', lower(city)
    for status in sorted({r["status"] for r in rows["orders"]}):
        yield "customer", "orders.status", f'= "{status}"', lower(status)
        yield "payment", "order.status", f'= "{status}"', lower(status)
    for method in sorted({r["method"] for r in rows["payments"]}):
        yield "customer", "orders.payments.method", f'= "{method}"', lower(method)
    for flag in (True, False):
        yield "order", "payments.refunded", f"= {str(flag).lower()}", lambda v, f=flag: bool(v) is f
    yield "order", "lines.quantity", "> 2", lambda v: float(v) > 2
    yield "product", "lines.order.status", '= "cancelled"', lower("cancelled")


def test_relation_conditions_match_the_oracle_for_both_tenants(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, rows = shop
    leaks_possible = 0
    checked = 0
    for entity, path, condition, test in cases(rows):
        plan = f"list {entity} where {path} {condition} limit 100"
        for tenant in SHOP_TENANTS:
            expected = oracle(shop_catalog, rows, entity, path, test, tenant=tenant)
            got = answer(plan, shop_catalog, engine, tenant)
            assert got == expected, (plan, tenant)
            careless = oracle(
                shop_catalog, rows, entity, path, test, tenant=tenant, same_tenant=False
            )
            leaks_possible += careless != expected
            checked += 1
    assert checked >= 40
    # the data can tell a tenant-bound join from a careless one
    assert leaks_possible >= 5, leaks_possible


def test_a_row_with_many_related_rows_is_one_row(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, _ = shop
    result = execute(
        parse_text('count customer where orders.status in ("delivered", "placed")'),
        shop_catalog,
        engine,
        "nordwind",
    )
    ids = [r.entity_id for r in result.rows]
    assert len(ids) == len(set(ids))
    assert result.count is not None and result.count <= (result.baseline_total or 0)


HOSTILE = [
    "'; DROP TABLE customers; --",
    'Berlin" OR 1=1 --',
    "Berlin' OR '1'='1",
    "\x00Berlin",
    "%",
    "_",
    "\\",
    "Berlin%",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_across_a_relation_bind_as_values(
    value: str, shop: tuple[sa.Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, rows = shop
    plan = f"list order where customer.city = {json.dumps(value)} limit 100"
    assert answer(plan, shop_catalog, engine, "nordwind") == set()
    plan = f'list order where customer.city in ({json.dumps(value)}, "Berlin") limit 100'
    expected = oracle(
        shop_catalog, rows, "order", "customer.city", lower("Berlin"), tenant="nordwind"
    )
    assert answer(plan, shop_catalog, engine, "nordwind") == expected
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM customers")).scalar_one() == len(
            rows["customers"]
        )


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sql"
# plan -> the relations its condition crosses
GOLDEN_PLANS = {
    "many_to_one": ('list order where customer.city = "Berlin"', 1),
    "one_to_many": ("count order where payments.refunded = true", 1),
    "two_hops": ('list customer where orders.payments.method in ("card", "paypal")', 2),
    "no_related_row": ("exists order where payments is null", 1),
    "no_related_row_two_hops": ("count customer where orders.payments is null", 2),
    "some_related_row": ("list customer where orders is not null", 1),
}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("name", sorted(GOLDEN_PLANS))
def test_golden_sql_across_relations(name: str, dialect: str, shop_catalog: Catalog) -> None:
    plan, hops = GOLDEN_PLANS[name]
    compiled = compile_plan(parse_text(plan), shop_catalog, dialect, tenant_id="nordwind")
    main = next(st for st in compiled.statements if st.role == "main")
    # every table of the path is bound to the tenant, by parameter, never as text
    assert main.sql.count("tenant_id = ") >= 1 + hops
    assert "nordwind" not in main.sql and "berlin" not in main.sql.casefold()
    assert main.params["tenant_id"] == "nordwind"
    lines = [f"-- plan: {plan}", f"-- dialect: {dialect}"]
    for st in compiled.statements:
        lines += ["", f"-- role: {st.role}", st.sql.rstrip()]
        lines.append("-- params: " + json.dumps(st.params, ensure_ascii=False, sort_keys=True))
    assert_golden(GOLDEN / f"related_sql__{name}__{dialect}.sql", "\n".join(lines) + "\n")
