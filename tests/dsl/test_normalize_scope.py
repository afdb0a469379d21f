"""Context fill: tenant, project scope and referenced objects."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError, PolicyError
from qdsl.dsl.ir import ObjectRef, Plan, QueryType, Scope, Span
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.parser import grammar_text
from qdsl.dsl.plan.schema import plan_json_schema

CAT = demo_catalog()


def plan(**kw: Any) -> Plan:
    kw.setdefault("query_type", QueryType.STATUS)
    kw.setdefault("entity_type", "project")
    return Plan(**kw)


def test_tenant_comes_from_the_context() -> None:
    out = normalize(plan(), CAT, PlanContext(tenant_id="t1")).plan
    assert out.scope == Scope(tenant_id="t1")


def test_same_tenant_in_plan_and_context_is_fine() -> None:
    out = normalize(plan(scope=Scope(tenant_id="t1")), CAT, PlanContext(tenant_id="t1"))
    assert out.plan.scope.tenant_id == "t1"


def test_a_plan_tenant_differing_from_the_context_is_refused() -> None:
    p = plan(scope=Scope(tenant_id="t2"))
    with pytest.raises(PolicyError) as info:
        normalize(p, CAT, PlanContext(tenant_id="t1"))
    assert info.value.to_dict() == {
        "type": "policy",
        "subtype": "tenant_scope_mismatch",
        "code": "policy/tenant_scope_mismatch",
        "message": "the plan names tenant `t2` but the caller is tenant `t1`",
        "retryable": False,
        "hint": "drop scope.tenant_id; the tenant comes from the caller",
        "details": {"path": "scope.tenant_id", "plan_tenant": "t2"},
    }
    assert info.value.exit_code == 6


def test_without_a_context_tenant_the_plan_is_left_as_written() -> None:
    assert normalize(plan(scope=Scope(tenant_id="t2")), CAT).plan.scope.tenant_id == "t2"


def test_project_from_context_unless_the_plan_has_its_own() -> None:
    ctx = PlanContext(tenant_id="t1", project_id="64", thread_anchor="msg-9")
    tasks = plan(query_type=QueryType.COUNT, entity_type="task")
    assert normalize(tasks, CAT, ctx).plan.scope == Scope(tenant_id="t1", project_id="64")
    own = tasks.model_copy(update={"scope": Scope(project_id="65")})
    assert normalize(own, CAT, ctx).plan.scope == Scope(tenant_id="t1", project_id="65")


def test_the_thread_anchor_is_no_part_of_a_plan() -> None:
    """Nothing executes or verifies a thread anchor: the text form has no clause
    for it, the JSON form no key; the context keeps it for an LLM planner."""
    from qdsl.dsl.plan.load import load_plan

    with pytest.raises(PlanError):
        load_plan('status project anchor "msg-9"')
    with pytest.raises(PlanError) as info:
        load_plan(
            '{"query_type": "status", "entity_type": "project", '
            '"scope": {"thread_anchor": "msg-9"}}'
        )
    assert "thread_anchor" in info.value.message
    assert "thread_anchor" not in Scope.model_fields
    assert "thread_anchor" not in json.dumps(plan_json_schema())
    assert "anchor" not in grammar_text()


def test_referenced_objects_are_merged_bound_and_deduplicated() -> None:
    p = plan(
        query_type=QueryType.COMPARE,
        scope=Scope(
            referenced_objects=(
                ObjectRef(entity_type="项目", id="64"),
                ObjectRef(entity_type="project", id="65"),
            )
        ),
    )
    ctx = PlanContext(
        tenant_id="t1",
        referenced_objects=(
            ObjectRef(entity_type="Projects", id="64"),
            ObjectRef(entity_type="run", id="12"),
        ),
    )
    # the context's run is not a subject of a project plan: left out
    assert normalize(p, CAT, ctx).plan.scope == Scope(
        tenant_id="t1",
        referenced_objects=(
            ObjectRef(entity_type="project", id="64"),
            ObjectRef(entity_type="project", id="65"),
        ),
    )


def test_a_plan_about_an_object_of_another_entity_is_refused() -> None:
    """`list task about project 64` used to list every task (the reference applied
    to nothing): a referenced object is a subject of the plan's own entity."""
    p = plan(
        query_type=QueryType.LIST,
        entity_type="task",
        scope=Scope(referenced_objects=(ObjectRef(entity_type="project", id="64"),)),
    )
    with pytest.raises(PlanError) as info:
        normalize(p, CAT, PlanContext(tenant_id="t1"))
    assert info.value.code == "validation/foreign_reference"
    assert info.value.hint == 'filter on it instead: `where project_id = "64"`'
    assert info.value.details["path"] == "scope.referenced_objects[0]"


def test_referenced_object_of_unknown_entity_is_refused_where_it_is() -> None:
    span = Span(line=2, column=7, end_line=2, end_column=17, start_pos=20, end_pos=30)
    p = plan(scope=Scope(referenced_objects=(ObjectRef(entity_type="tsak", id="3", span=span),)))
    with pytest.raises(PlanError) as info:
        normalize(p, CAT)
    assert info.value.to_dict() == {
        "type": "validation",
        "subtype": "unknown_entity",
        "code": "validation/unknown_entity",
        "message": "unknown entity `tsak`",
        "retryable": False,
        "hint": 'did you mean "task"?',
        "details": {
            "path": "scope.referenced_objects[0].entity_type",
            "line": 2,
            "column": 7,
            "entity": "tsak",
            "suggestions": ["task"],
        },
    }


def test_context_referenced_object_errors_name_the_context() -> None:
    ctx = PlanContext(referenced_objects=(ObjectRef(entity_type="nothing_like_it", id="1"),))
    with pytest.raises(PlanError) as info:
        normalize(plan(), CAT, ctx)
    assert info.value.details["path"] == "context.referenced_objects[0].entity_type"


def test_plan_context_is_frozen() -> None:
    ctx = PlanContext(tenant_id="t1")
    with pytest.raises(AttributeError):
        ctx.tenant_id = "t2"  # type: ignore[misc]


def test_tenant_mismatch_is_reported_before_anything_else() -> None:
    p = Plan(query_type=QueryType.EXPLAIN, entity_type="projcet", scope=Scope(tenant_id="t2"))
    with pytest.raises(PolicyError) as info:
        normalize(p, CAT, PlanContext(tenant_id="t1"))
    assert info.value.code == "policy/tenant_scope_mismatch"
