"""Tenant isolation, as a property: whatever the plan, no row, count or evidence
of another tenant ever comes back. Ids overlap across tenants on purpose, so
every row is checked by (tenant, id, label) against that tenant's own data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.executor.run import execute

_SNAPSHOTS: dict[str, Snapshot] = {}


@pytest.fixture
def data(engine: Engine, dialect: str) -> Iterator[Snapshot]:
    if dialect not in _SNAPSHOTS:
        _SNAPSHOTS[dialect] = snapshot(engine)
    yield _SNAPSHOTS[dialect]


def _check(plan: Plan, engine: Engine, data: Snapshot, tenant: str) -> None:
    entity = CATALOG.entity(plan.entity_type)
    own = {(r["id"], r[entity.label]) for r in data[entity.table] if r["tenant_id"] == tenant}
    own_ids = {i for i, _label in own}
    fact_tenant = {f"fact:{f['id']}": f["tenant_id"] for f in data["semantic_facts"]}
    try:
        result = execute(plan, CATALOG, engine, tenant, now=NOW)
    except PlanError:
        return  # e.g. an undrawable value for the field type: refused, nothing read
    assert result.tenant_id == tenant
    for row in result.rows:
        assert row.tenant_id == tenant
        assert (row.entity_id, row.label) in own, (tenant, row.entity_id, row.label)
    for ev in result.evidence:
        assert ev.tenant_id == tenant
        if ev.kind == "fact":
            assert fact_tenant[ev.id] == tenant, ev.id
        else:
            assert ev.entity_id in own_ids
    if result.count is not None:
        assert 0 <= result.count <= len(own)
    if result.baseline_total is not None:
        assert result.baseline_total == len(own)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st_data=st.data())
def test_no_row_count_or_evidence_of_another_tenant(
    engine: Engine, data: Snapshot, st_data: st.DataObject
) -> None:
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=True))
    for tenant in (*TENANTS, "t_nobody"):
        _check(plan, engine, data, tenant)
