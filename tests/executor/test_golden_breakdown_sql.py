"""Golden SQL of breakdowns with a measure and across relations, on both dialects.

One file per (plan, dialect) under tests/golden/sql/, over the online shop
(tests/deployments/shop/): a sum and an average per group (the basis statement
computing the total and "other"), a grouping two relations away, the related
object itself, a related date's period, a declared product measure per related
object. Every statement binds the tenant (on every
table of a relation path) and the values as parameters. QDSL_UPDATE_GOLDEN=1
rewrites them (as tests/executor/test_golden_sql.py does); review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deployments.shop import SHOP_CATALOG
from test_golden_sql import assert_golden, render_golden

from qdsl.dsl.catalog import load_catalog
from qdsl.dsl.plan.parser import parse_text
from qdsl.executor.compile import compile_plan

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sql"
TENANT = "nordwind"
PLANS = {
    "sum_per_method": (
        "breakdown payment where refunded = false measure sum(amount) group by method"
    ),
    "ratio_per_month": "breakdown payment measure average_order_value group by paid_at month",
    "by_customer_tier": "breakdown payment measure total_paid group by order.customer.tier",
    "by_customer": 'breakdown order where status = "delivered" group by customer limit 5',
    "by_signup_year": "breakdown order group by customer.signed_up year",
    # a declared product (quantity × unit_price) per related object, the top five
    "revenue_per_product": "breakdown order_line measure revenue group by product limit 5",
}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("case", sorted(PLANS))
def test_golden_breakdown_sql(case: str, dialect: str) -> None:
    compiled = compile_plan(
        parse_text(PLANS[case]), load_catalog(SHOP_CATALOG), dialect, tenant_id=TENANT
    )
    for st in compiled.statements:
        assert st.params.get("tenant_id") == TENANT, st.role
        assert f"'{TENANT}'" not in st.sql and "'delivered'" not in st.sql
    text = render_golden(compiled)
    assert_golden(GOLDEN / f"breakdown_sql__{case}__{dialect}.sql", text)


def test_no_stale_breakdown_goldens() -> None:
    expected = {f"breakdown_sql__{c}__{d}.sql" for c in PLANS for d in ("sqlite", "postgresql")}
    present = {p.name for p in GOLDEN.glob("breakdown_sql__*.sql")}
    assert present <= expected, sorted(present - expected)
