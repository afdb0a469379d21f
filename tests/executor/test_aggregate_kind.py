"""The `aggregate` kind (a sum under the filters) against a Python oracle, both dialects.

The oracle reads the demo's rows directly (every tenant) and sums what the plan
asks for one tenant: NULLs add nothing, another tenant's rows never count, an
empty match has no value. Rendering and the consistency rule run on the result.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, text

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import KINDS
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.compile import compile_plan
from qdsl.executor.run import execute


def _rows(engine: Engine) -> list[tuple[str, str, str, float | None]]:
    with engine.connect() as conn:
        found = conn.execute(text("SELECT tenant_id, id, status, budget FROM projects")).all()
    return [(str(t), str(i), str(s), None if b is None else float(b)) for t, i, s, b in found]


def _oracle(
    rows: list[tuple[str, str, str, float | None]], tenant: str, status: str | None
) -> tuple[float | None, set[str]]:
    mine = [(i, b) for t, i, s, b in rows if t == tenant and status in (None, s) and b is not None]
    return (sum(b for _, b in mine) if mine else None), {i for i, _ in mine}


_CASES = [
    ("t1", "active"),  # one NULL budget among them
    ("t1", None),
    ("t2", "paused"),
    ("t3", "closed"),
    ("nobody", None),  # a tenant with no rows: empty, no value
]


@pytest.mark.parametrize(("tenant", "status"), _CASES)
def test_a_sum_agrees_with_the_oracle(engine: Engine, tenant: str, status: str | None) -> None:
    catalog = demo_catalog()
    where = f' where status = "{status}"' if status else ""
    plan = compile_source(f"aggregate project{where} select budget limit 200", catalog, None).plan
    result = execute(plan, catalog, engine, tenant)
    value, members = _oracle(_rows(engine), tenant, status)
    data: dict[str, Any] = dict(result.data)
    assert data["function"] == "sum" and data["measure"] == "budget"
    assert data["value"] == value, (tenant, status, data, value)
    assert data["values"] == len(members)
    assert set(data["rows"]) == members  # every summed row cited (under the limit)
    assert all(r.tenant_id == tenant for r in result.rows)


def test_the_cited_rows_are_capped_and_the_count_is_kept(engine: Engine) -> None:
    catalog = demo_catalog()
    plan = compile_source("aggregate project select budget limit 3", catalog, None).plan
    result = execute(plan, catalog, engine, "t3")
    value, members = _oracle(_rows(engine), "t3", None)
    assert result.data["value"] == value
    assert len(result.data["rows"]) == 3 and set(result.data["rows"]) <= members
    assert result.data["values"] == len(members) and result.truncated


def test_the_tenant_is_bound_on_every_statement() -> None:
    catalog = demo_catalog()
    plan = compile_source('aggregate project where status = "active" select budget', catalog, None)
    sql = [s.sql for s in compile_plan(plan.plan, catalog, "sqlite", tenant_id="t1").statements]
    assert "sum(projects.budget)" in sql[0]
    assert all("projects.tenant_id = ?" in q for q in sql), sql
    assert all("'active'" not in q and "'t1'" not in q for q in sql), sql  # values bound


@pytest.mark.parametrize(
    ("select", "subtype", "hint"),
    [
        ("title", "aggregation_not_allowed", "budget"),
        ("budgit", "unknown_field", 'did you mean "budget"'),  # the normalizer's own
        ("budget, title", "measure_not_named", "budget"),
    ],
)
def test_a_field_without_sum_is_refused_with_a_did_you_mean(
    select: str, subtype: str, hint: str
) -> None:
    catalog = demo_catalog()
    with pytest.raises(PlanError) as err:
        plan = compile_source(f"aggregate project select {select}", catalog, None).plan
        compile_plan(plan, catalog, "sqlite", tenant_id="t1")
    assert err.value.subtype == subtype, err.value
    assert hint in (err.value.hint or ""), err.value.hint


def test_the_kind_is_on_the_record() -> None:
    kind = KINDS[QueryType("aggregate")]
    assert kind.contract.value == "aggregate_with_basis"
    assert kind.data_keys == {"value", "measure", "function", "filters", "rows"}
