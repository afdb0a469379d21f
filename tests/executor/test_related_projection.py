"""A related entity's field in a projection (`list order select customer.city`), on the
shop (tests/deployments/shop/), SQLite and PostgreSQL: each row shows the value
of the one row its many-to-one path reaches, computed by a Python oracle that
follows the ids within the tenant. Ids are unique per tenant only, so the other
tenant holds a row under the same key: a careless join would show its value,
and the data is checked to tell the two apart. One-to-many paths are refused (a
row would have many values); the SQL is pinned by golden files."""

from __future__ import annotations

import json
import os
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_TENANTS, Rows

from qdsl.dsl.catalog import Catalog, relation_path
from qdsl.dsl.errors import PlanError
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text
from qdsl.executor.compile import compile_plan
from qdsl.executor.run import execute

# (entity, projected paths): one hop, two hops, a number, a date and a yes/no
CASES = (
    ("order", ("customer.city", "customer.tier", "customer.signed_up", "customer.newsletter")),
    ("order_line", ("order.customer.city", "product.list_price", "product.category")),
    ("payment", ("order.status", "order.customer.name")),
)


def reached(
    catalog: Catalog, rows: Rows, entity: str, path: str, row: dict[str, Any], *, tenant: str | None
) -> Any:
    """The oracle: the value at the end of `path` from `row`, following keys within
    `tenant` (None: in any tenant, as a careless join would)."""
    *names, field = path.split(".")
    steps = relation_path(catalog, entity, names)
    here: dict[str, Any] | None = row
    for step in steps:
        assert here is not None
        key = here[step.source_column]
        here = next(
            (
                r
                for r in rows[step.target_table]
                if r[step.target_column] == key and (tenant is None or r["tenant_id"] == tenant)
            ),
            None,
        )
        if here is None:
            return None
    column = catalog.entities[steps[-1].target].column_for(field)
    assert column is not None
    return here[column]


def same(found: Any, wanted: Any) -> bool:
    if wanted is None or found is None:
        return found is wanted
    if isinstance(wanted, (Decimal, float, int)) and not isinstance(wanted, bool):
        return float(found) == float(wanted)
    if isinstance(wanted, (date, datetime)):
        return str(found)[:10] == wanted.isoformat()[:10]
    if isinstance(wanted, bool) or (isinstance(found, bool) and wanted in (0, 1)):
        return bool(found) == bool(wanted)
    return str(found) == str(wanted)


def test_each_row_shows_its_related_rows_value_within_the_tenant(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, rows = shop
    checked = careless_differs = 0
    for entity, paths in CASES:
        table = shop_catalog.entities[entity].table
        plan = parse_text(f"list {entity} select {', '.join(paths)} limit 1000")
        for tenant in SHOP_TENANTS:
            result = execute(plan, shop_catalog, engine, tenant)
            mine = {str(r["id"]): r for r in rows[table] if r["tenant_id"] == tenant}
            assert result.count == len(mine) == len(result.rows), (entity, tenant)
            for got in result.rows:
                row = mine[got.entity_id]
                for path in paths:
                    wanted = reached(shop_catalog, rows, entity, path, row, tenant=tenant)
                    assert same(got.values[path], wanted), (entity, path, got.entity_id, tenant)
                    careless = reached(shop_catalog, rows, entity, path, row, tenant=None)
                    careless_differs += not same(careless, wanted)
                    checked += 1
    assert checked >= 200
    # the data tells a tenant-bound join from one that ignores the tenant
    assert careless_differs >= 10, careless_differs


@pytest.mark.parametrize(
    ("plan", "subtype"),
    [
        ("list customer select orders.status", "relation_many_values"),
        ("list order select payments.method", "relation_many_values"),
        ("list order select customer.nope", "unknown_field"),
        ("list order select custmer.city", "unknown_relation"),
        ("list order_line select order.customer.orders.status", "relation_path_too_long"),
    ],
)
def test_a_projection_no_row_can_show_is_refused(
    plan: str, subtype: str, shop_catalog: Catalog
) -> None:
    with pytest.raises(PlanError) as info:
        normalize(parse_text(plan), shop_catalog, PlanContext(tenant_id="nordwind"))
    assert info.value.subtype == subtype, info.value
    assert info.value.details.get("path", "").startswith("projection"), info.value.details


def test_a_related_projection_prints_and_parses_back(shop_catalog: Catalog) -> None:
    plan = parse_text("list order_line select title, order.customer.city")
    bound = normalize(plan, shop_catalog, PlanContext(tenant_id="nordwind")).plan
    assert bound.projection == ("title", "order.customer.city")
    assert parse_text(to_text(bound)) == bound


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sql"
GOLDEN_PLANS = {
    "one_hop": "list order select number, customer.city",
    "two_hops": "list order_line select title, order.customer.city",
}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("name", sorted(GOLDEN_PLANS))
def test_golden_sql_of_related_projections(name: str, dialect: str, shop_catalog: Catalog) -> None:
    compiled = compile_plan(
        parse_text(GOLDEN_PLANS[name]), shop_catalog, dialect, tenant_id="nordwind"
    )
    main = next(st for st in compiled.statements if st.role == "main")
    hops = GOLDEN_PLANS[name].split(", ")[1].count(".")
    # every table of the path is bound to the tenant, by parameter, never as text
    assert main.sql.count("tenant_id = ") >= 1 + hops
    assert "nordwind" not in main.sql
    lines = [f"-- plan: {GOLDEN_PLANS[name]}", f"-- dialect: {dialect}"]
    for st in compiled.statements:
        lines += ["", f"-- role: {st.role}", st.sql.rstrip()]
        lines.append("-- params: " + json.dumps(st.params, ensure_ascii=False, sort_keys=True))
    text = "\n".join(lines) + "\n"
    path = GOLDEN / f"related_projection__{name}__{dialect}.sql"
    if os.environ.get("QDSL_UPDATE_GOLDEN") == "1" or not path.exists():
        if os.environ.get("CI") and not path.exists():
            pytest.fail(f"missing golden file {path.name}; run with QDSL_UPDATE_GOLDEN=1")
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
