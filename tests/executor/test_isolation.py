"""Tenant isolation, as a property: whatever the plan, no row, count or evidence
of another tenant ever comes back. Ids overlap across tenants on purpose, so
every row is checked by (tenant, id, label) against that tenant's own data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, snapshot
from hypothesis import given
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


_OWN: dict[tuple[int, str, str], set[tuple[Any, Any]]] = {}
_FACT_TENANT: dict[int, dict[str, str]] = {}


def _own(data: Snapshot, table: str, label: str, tenant: str) -> set[tuple[Any, Any]]:
    """(id, label) of the tenant's rows, worked out once per snapshot: thousands of
    executions check against the same data."""
    key = (id(data), table, tenant)
    if key not in _OWN:
        _OWN[key] = {(r["id"], r[label]) for r in data[table] if r["tenant_id"] == tenant}
    return _OWN[key]


def _fact_tenant(data: Snapshot) -> dict[str, str]:
    if id(data) not in _FACT_TENANT:
        _FACT_TENANT[id(data)] = {
            f"fact:{f['id']}": f["tenant_id"] for f in data["semantic_facts"]
        }
    return _FACT_TENANT[id(data)]


def _check(plan: Plan, engine: Engine, data: Snapshot, tenant: str) -> None:
    entity = CATALOG.entity(plan.entity_type)
    own = _own(data, entity.table, entity.label, tenant)
    own_ids = {i for i, _label in own}
    fact_tenant = _fact_tenant(data)
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


# Plans per Hypothesis example: the profile's examples times BATCH is the
# number of plans (ci: 100 x 20 = 2,000 per dialect; deep: 20,000), each run
# for every tenant (every fifth also for a tenant that has no data).
BATCH = 20


@given(st_data=st.data())
def test_no_row_count_or_evidence_of_another_tenant(
    engine: Engine,
    dialect: str,
    data: Snapshot,
    st_data: st.DataObject,
    suite_counts: Counter[str],
) -> None:
    for i in range(BATCH):
        plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=True))
        for tenant in TENANTS:
            _check(plan, engine, data, tenant)
            suite_counts[f"isolation[{dialect}] plan x tenant"] += 1
        if i % 5 == 0:  # and now and then a tenant that has no data at all
            _check(plan, engine, data, "t_nobody")
            suite_counts[f"isolation[{dialect}] plan x tenant without data"] += 1
