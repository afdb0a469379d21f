"""The online shop's curated cases (tests/cases/shop.toml), computed from its rows."""

from __future__ import annotations

from cases.oracle import CaseFile
from cases.shop_rows import TENANTS, Shop
from cases.shop_tenant import add_analytic_cases, add_plain_cases


def build(data: dict[str, Shop]) -> CaseFile:
    cf = CaseFile("shop", {"tenant": "nordwind", "now": "2026-06-15T12:00:00Z"})
    for tenant in TENANTS:
        add_plain_cases(cf, tenant, data[tenant])
        add_analytic_cases(cf, tenant, data[tenant])
    return cf


HEADER = """
Curated questions for the online shop (tests/deployments/shop/), tenants
nordwind and sunrise, clock 2026-06-15T12:00:00Z. Expectations were computed
from the rows by hand-written Python over rows read with sqlite3
(tests/cases/build_cases.py), never copied from qdsl. Run: qdsl --db URL
--catalog tests/deployments/shop/catalog.toml eval tests/cases/shop.toml
Aggregates expect `aggregate_with_basis` and their `value`, breakdowns
`breakdown_table` and their `groups` (key -> value); questions across a
relation expect the ids the relation selects. Until the plan language states
them, such questions must abstain (safe), never be answered beside the question.
"""
