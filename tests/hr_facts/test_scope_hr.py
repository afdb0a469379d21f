"""A project scope on a deployment of its own: here it names a department.

Nothing in qdsl knows what a project scope means: the HR catalog says
`[scope] entity = "department"`, so `project "D-1"` keeps the employees whose
`department_id` (their field referencing department) is D-1 and the
department D-1 itself; sites belong to no department and are not covered.
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from hr_deployment import HR_CATALOG
from sqlalchemy import Engine

from qdsl import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute


@pytest.fixture(scope="module")
def scoped() -> Catalog:
    raw = tomllib.loads(HR_CATALOG.read_text(encoding="utf-8"))
    return catalog_from_mapping({**raw, "scope": {"entity": "department"}}, source="hr+scope")


def _run(plan: str, engine: Engine, catalog: Catalog, tenant: str = "acme") -> Any:
    bound = compile_source(plan, catalog, PlanContext(tenant_id=tenant)).bound
    assert bound is not None
    return execute(bound, catalog, engine, tenant)


def test_a_department_scope_keeps_its_employees(hr_engine: Engine, scoped: Catalog) -> None:
    assert _run("count employee", hr_engine, scoped).count == 5
    d1 = _run('list employee project "D-1"', hr_engine, scoped)
    assert {r.entity_id for r in d1.rows} == {"E-1", "E-4"}
    assert {r.values["department_id"] for r in d1.rows} == {"D-1"}
    assert _run('count employee project "D-2"', hr_engine, scoped).count == 3
    assert _run('count employee where level = "senior" project "D-2"', hr_engine, scoped).count == 2
    # globex's D-1 is its own, with employees of its own
    globex = _run('list employee project "D-1"', hr_engine, scoped, tenant="globex")
    assert {r.entity_id for r in globex.rows} == {"E-1", "E-4"}
    assert {r.tenant_id for r in globex.rows} == {"globex"}


def test_a_scoped_fact_filter_stays_in_the_scope(hr_engine: Engine, scoped: Catalog) -> None:
    # Go is a skill of E-1, E-4 (D-1) and E-13 (D-2)
    result = _run('list employee where skill = "Go" project "D-2"', hr_engine, scoped)
    assert [r.entity_id for r in result.rows] == ["E-13"]


def test_the_scope_entity_itself(hr_engine: Engine, scoped: Catalog) -> None:
    result = _run('list department project "D-2"', hr_engine, scoped)
    assert [r.entity_id for r in result.rows] == ["D-2"]


def test_an_entity_of_no_department_is_not_covered(scoped: Catalog) -> None:
    with pytest.raises(NotCoveredError) as info:
        compile_source('count site project "D-1"', scoped, PlanContext(tenant_id="acme"))
    assert info.value.code == "not_covered/scope_not_covered"
    assert "`site` has no field referencing `department`" in info.value.message


def test_a_catalog_without_a_scope_refuses_a_scoped_plan(hr_catalog: Catalog) -> None:
    with pytest.raises(NotCoveredError) as info:
        compile_source('count employee project "D-1"', hr_catalog, PlanContext(tenant_id="acme"))
    assert "declares no project scope" in info.value.message


def test_the_conversations_department_scopes_a_question(hr_engine: Engine, scoped: Catalog) -> None:
    options = AnswerOptions(catalog=scoped, context=PlanContext(project_id="D-2"))
    res = plan_and_answer("有多少个员工", "acme", engine=hr_engine, options=options)
    assert res.status == "answered", (res.status, res.text)
    assert res.data["count"] == 3
    assert "部门 D-2 内" in res.text
