"""Tenant isolation across relations and groups, as a property, on SQLite and
PostgreSQL: a tenant's answer is the same whether or not another tenant's rows
exist.

Hypothesis writes plans on the online shop (tests/deployments/shop/): lists,
counts, existence, aggregates and breakdowns, with conditions on the entity's own
fields, across many-to-one and one-to-many relations (one and two hops), on
related rows themselves (`payments is null`), groupings by a field, a grain, a
related field or a related object, and measures (a field's function, a declared
measure, a ratio, a product). Each plan runs for each tenant on the shop as built
(both tenants' rows, ids overlapping across tenants), and on a copy holding that
tenant's rows alone (every table's other-tenant rows deleted, qdsl's own tables
included): rows, counts, groups, values and evidence must be equal. A related
row, a group member or a summed row of the other tenant would change one of them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_TENANTS, build_shop_database
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.normalize import normalize
from qdsl.dsl.plan.parser import parse_text
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine

# entity -> conditions a plan on it may carry (values drawn from the shop's data)
CONDITIONS: dict[str, tuple[str, ...]] = {
    "order": (
        'status = "{status}"',
        'channel = "{channel}"',
        'customer.city = "{city}"',
        'customer.tier = "{tier}"',
        'payments.method = "{method}"',
        "payments.refunded = {flag}",
        "payments is null",
        "payments is not null",
        'lines.product.category = "{category}"',
        "customer is null",
    ),
    "customer": (
        'city = "{city}"',
        'orders.status = "{status}"',
        'orders.payments.method = "{method}"',
        "orders is null",
        "orders.payments is not null",
    ),
    "payment": (
        'method = "{method}"',
        "refunded = {flag}",
        'order.status = "{status}"',
        'order.customer.tier = "{tier}"',
        "order is null",
    ),
    "order_line": (
        'product.category = "{category}"',
        'order.channel = "{channel}"',
        'order.customer.city = "{city}"',
    ),
    "product": ('category = "{category}"', 'lines.order.status = "{status}"', "lines is null"),
}
GROUPINGS: dict[str, tuple[str, ...]] = {
    "order": ("status", "channel", "ordered_at month", "customer", "customer.tier"),
    "customer": ("tier", "city", "signed_up year"),
    "payment": ("method", "order.customer.tier", "order.customer", "paid_at month"),
    "order_line": ("product", "product.category", "order.channel"),
    "product": ("category",),
}
MEASURES: dict[str, tuple[str, ...]] = {
    "payment": ("sum(amount)", "avg(amount)", "max(amount)", "total_paid", "average_order_value"),
    "order_line": ("units_sold", "revenue", "min(unit_price)"),
    "product": ("average_price", "max(list_price)"),
}
VALUES = {
    "status": ("placed", "shipped", "delivered", "cancelled"),
    "channel": ("web", "app"),
    "city": ("Berlin", "Hamburg", "Shanghai", "Beijing"),
    "tier": ("standard", "gold"),
    "method": ("card", "paypal", "transfer"),
    "flag": ("true", "false"),
    "category": ("books", "electronics", "garden"),
}


@st.composite
def plans(draw: st.DrawFn) -> str:
    entity = draw(st.sampled_from(sorted(CONDITIONS)))
    conds = draw(st.lists(st.sampled_from(CONDITIONS[entity]), max_size=2, unique=True))
    values = {k: draw(st.sampled_from(v)) for k, v in VALUES.items()}
    where = " where " + " and ".join(c.format(**values) for c in conds) if conds else ""
    kinds = ["list", "count", "existence", "breakdown"]
    if entity in MEASURES:
        kinds.append("aggregate")
    kind = draw(st.sampled_from(kinds))
    if kind == "aggregate":
        return f"aggregate {entity}{where} measure {draw(st.sampled_from(MEASURES[entity]))}"
    if kind == "breakdown":
        by = draw(st.sampled_from(GROUPINGS[entity]))
        measure = (
            draw(st.none() | st.sampled_from(MEASURES[entity])) if entity in MEASURES else None
        )
        measured = f" measure {measure}" if measure else ""
        limit = draw(st.sampled_from(("", " limit 2", " limit 5")))
        return f"breakdown {entity}{where}{measured} group by {by}{limit}"
    return f"{kind} {entity}{where}" + (" limit 100" if kind == "list" else "")


def essence(result: ExecutionResult) -> dict[str, Any]:
    """What a tenant is answered: every row, count, group, value and evidence id."""
    return {
        "rows": [(r.tenant_id, r.entity_id, r.label, r.values) for r in result.rows],
        "count": result.count,
        "baseline": result.baseline_total,
        "truncated": result.truncated,
        "evidence": sorted(e.id for e in result.evidence),
        "data": result.data,
    }


def _keep_only(url: str, tenant: str) -> None:
    """Delete every other tenant's rows, children before the rows they reference."""
    engine = sa.create_engine(url)
    try:
        md = sa.MetaData()
        md.reflect(engine)
        with engine.begin() as conn:
            for table in reversed(md.sorted_tables):
                if "tenant_id" in table.c:
                    conn.execute(sa.delete(table).where(table.c.tenant_id != tenant))
    finally:
        engine.dispose()


@pytest.fixture(
    scope="module",
    params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)],
)
def shops(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[sa.Engine, dict[str, sa.Engine]]]:
    """The shop with both tenants, and for each tenant a copy holding its rows alone."""
    if request.param == "sqlite":
        full = request.getfixturevalue("shop_sqlite_path")
        urls = {}
        for tenant in SHOP_TENANTS:
            copy = Path(tmp_path_factory.mktemp("alone")) / f"{tenant}.sqlite3"
            shutil.copyfile(full, copy)
            urls[tenant] = f"sqlite+pysqlite:///{copy}"
        both = f"sqlite+pysqlite:///{full}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        both = request.getfixturevalue("shop_pg_url")
        urls = {}
        for tenant in SHOP_TENANTS:
            urls[tenant] = factory()
            build_shop_database(urls[tenant])
    for tenant, url in urls.items():
        _keep_only(url, tenant)
    engines = {t: make_engine(u) for t, u in urls.items()}
    engine = make_engine(str(both))
    yield engine, engines
    engine.dispose()
    for e in engines.values():
        e.dispose()


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=plans())
def test_a_tenants_answer_does_not_depend_on_another_tenants_rows(
    text: str, shops: tuple[sa.Engine, dict[str, sa.Engine]], shop_catalog: Catalog
) -> None:
    both, alone = shops
    try:
        plan = parse_text(text)
        answers = {t: execute(plan, shop_catalog, both, t) for t in SHOP_TENANTS}
    except PlanError:
        return  # a combination the catalog does not allow (a ratio's measure per group)
    for tenant, answer in answers.items():
        assert all(r.tenant_id == tenant for r in answer.rows), text
        assert essence(answer) == essence(execute(plan, shop_catalog, alone[tenant], tenant)), (
            text,
            tenant,
        )


@pytest.mark.parametrize("entity", sorted(CONDITIONS))
def test_every_condition_grouping_and_measure_drawn_is_one_the_shop_allows(
    entity: str, shop_catalog: Catalog
) -> None:
    # the property's plans are refused only where a kind combines them badly, never
    # because a piece of them names nothing: each piece normalizes on its own
    values = {k: v[0] for k, v in VALUES.items()}
    for cond in CONDITIONS[entity]:
        normalize(parse_text(f"list {entity} where {cond.format(**values)}"), shop_catalog)
    for by in GROUPINGS[entity]:
        normalize(parse_text(f"breakdown {entity} group by {by}"), shop_catalog)
    for measure in MEASURES.get(entity, ()):
        normalize(parse_text(f"aggregate {entity} measure {measure}"), shop_catalog)
        normalize(
            parse_text(f"breakdown {entity} measure {measure} group by {GROUPINGS[entity][0]}"),
            shop_catalog,
        )
