"""Golden SQL of the aggregate kind's measures, on both dialects.

One file per (measure, dialect) under tests/golden/sql/, over the online shop's
payments (tests/deployments/shop/, answering aggregates, `method` allowing
count_distinct): every function, count() of the rows, a declared measure and a
declared ratio, under a filter; and the order lines' declared product (revenue,
quantity × unit_price). QDSL_UPDATE_GOLDEN=1 rewrites them (as
tests/executor/test_golden_sql.py does); review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deployments.shop import SHOP_CATALOG
from test_golden_sql import assert_golden, render_golden

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.dsl.ir import Aggregation, QueryType
from qdsl.dsl.plan.parser import parse_text
from qdsl.executor.compile import compile_plan

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sql"
TENANT = "nordwind"
MEASURES = {
    "sum": "sum(amount)",
    "avg": "avg(amount)",
    "min": "min(amount)",
    "max": "max(amount)",
    "count": "count()",
    "count_distinct": "count_distinct(method)",
    "declared": "orders_paid",
    "ratio": "average_order_value",
}


def _catalog() -> Catalog:
    catalog = load_catalog(SHOP_CATALOG)
    ent = catalog.entities["payment"]
    kinds = (*ent.query_types, QueryType.AGGREGATE)
    method = ent.fields["method"].model_copy(update={"aggregations": (Aggregation.COUNT_DISTINCT,)})
    fields = {**ent.fields, "method": method}
    ent = ent.model_copy(update={"query_types": kinds, "fields": fields})
    return catalog.model_copy(update={"entities": {**catalog.entities, "payment": ent}})


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("case", sorted(MEASURES))
def test_golden_measure_sql(case: str, dialect: str) -> None:
    plan = parse_text(f'aggregate payment where method = "card" measure {MEASURES[case]}')
    compiled = compile_plan(plan, _catalog(), dialect, tenant_id=TENANT)
    for st in compiled.statements:
        assert st.params.get("tenant_id") == TENANT, st.role
        assert f"'{TENANT}'" not in st.sql and "'card'" not in st.sql
    text = render_golden(compiled)
    assert_golden(GOLDEN / f"measure_sql__{case}__{dialect}.sql", text)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_golden_product_measure_sql(dialect: str) -> None:
    # a declared product: each row's quantity × unit_price, a NULL in either no value
    plan = parse_text("aggregate order_line where quantity >= 2 measure revenue")
    compiled = compile_plan(plan, _catalog(), dialect, tenant_id=TENANT)
    for st in compiled.statements:
        assert st.params.get("tenant_id") == TENANT, st.role
        assert "quantity * order_lines.unit_price" in st.sql, st.role
    assert_golden(GOLDEN / f"measure_sql__product__{dialect}.sql", render_golden(compiled))


def test_no_stale_measure_goldens() -> None:
    cases = (*MEASURES, "product")
    expected = {f"measure_sql__{c}__{d}.sql" for c in cases for d in ("sqlite", "postgresql")}
    present = {p.name for p in GOLDEN.glob("measure_sql__*.sql")}
    assert present <= expected, sorted(present - expected)
