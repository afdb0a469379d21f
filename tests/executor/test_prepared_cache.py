"""The executor's per-plan preparation cache serves what a fresh preparation would.

Property: for any generated plan bound for a tenant, on SQLite and on
PostgreSQL, executing the same BoundPlan again (a hit) returns the result a
fresh preparation returns (the cache emptied first), apart from the execution
id and the elapsed time. And a plan bound for one tenant is refused for
another however warm the cache is.
"""

from __future__ import annotations

from typing import Any

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, sample_plan, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine

from qdsl.dsl.errors import PolicyError, QdslError
from qdsl.dsl.ir import QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.executor import prepared_cache
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import execute

_DATA: dict[int, Snapshot] = {}


def _data(engine: Engine) -> Snapshot:
    if id(engine) not in _DATA:
        _DATA[id(engine)] = snapshot(engine)
    return _DATA[id(engine)]


def _comparable(result: ExecutionResult) -> dict[str, Any]:
    data = result.model_dump(exclude={"execution_id", "elapsed_ms"})
    for ev in data["evidence"]:
        assert ev.pop("execution_id") == result.execution_id
    return data


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st_data=st.data())
def test_a_cached_preparation_executes_as_a_fresh_one(
    engine: Engine, st_data: st.DataObject
) -> None:
    data = _data(engine)
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=st_data.draw(st.booleans())))
    tenant = st_data.draw(st.sampled_from(TENANTS))
    try:
        bound = normalize(plan, CATALOG, PlanContext(tenant_id=tenant)).bound
        assert bound is not None
        first = execute(bound, CATALOG, engine, tenant, now=NOW)
    except (QdslError, AssertionError):
        return  # a plan refused before it runs has nothing to compare
    again = execute(bound, CATALOG, engine, tenant, now=NOW)
    prepared_cache.clear()
    fresh = execute(bound, CATALOG, engine, tenant, now=NOW)
    assert _comparable(again) == _comparable(fresh) == _comparable(first), plan
    assert again.execution_id != first.execution_id


def test_a_warm_plan_is_still_refused_for_another_tenant(engine: Engine) -> None:
    plan = sample_plan("project", QueryType.EXISTENCE)
    bound = normalize(plan, CATALOG, PlanContext(tenant_id="t1")).bound
    assert bound is not None
    execute(bound, CATALOG, engine, "t1", now=NOW)
    execute(bound, CATALOG, engine, "t1", now=NOW)
    for _ in range(2):
        with pytest.raises(PolicyError) as info:
            execute(bound, CATALOG, engine, "t2", now=NOW)
        assert info.value.subtype == "tenant_scope_mismatch"
