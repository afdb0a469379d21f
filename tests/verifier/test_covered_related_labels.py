"""question_covered for a related object named by its label: the related filter
the question's reading holds (`customer.name`, `projects.owner.name`) covers the
name; a plan that drops it, puts the name on another path or field, or asks
about the related entity itself is refused. A plan picking one of several paths
the question leaves open is refused too. On the shop and the agency catalog."""

from __future__ import annotations

import pytest
from deployments.agency import agency_catalog

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Plan
from qdsl.dsl.linking import LinkedValue, TenantValues
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.question import Reading, read_question
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.result import ExecutionResult
from qdsl.planner import plan_from_reading
from qdsl.verifier import Answer, Subject, VerifyContext
from qdsl.verifier.checks.question import question_covered

VALUES: TenantValues = {
    normalize_text(v): (LinkedValue(e, f, v),)
    for e, f, v in (
        ("customer", "name", "Felix Hoffmann"),
        ("person", "name", "Zoe Park"),
        ("client", "name", "Acme Corp"),
    )
}

# question -> (catalog, the plan that answers it, plans that must be refused)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "Which orders did Felix Hoffmann place?": (
        "shop",
        'list order where customer.name = "Felix Hoffmann"',
        [
            "list order",  # dropped
            'list order where lines.title = "Felix Hoffmann"',  # another path
            'list order where payments.reference = "Felix Hoffmann"',
            'list order where number = "Felix Hoffmann"',  # the order's own field
            'list customer where name = "Felix Hoffmann"',  # the related entity itself
            'list order where customer.name = "Anna Schmidt"',  # another name
            'list order where customer.name contains "Felix"',  # wider
        ],
    ),
    "Felix Hoffmann 的订单有哪些": (
        "shop",
        'list order where 客户.name = "felix hoffmann"',  # a synonym, another case
        ["list order", 'list order where lines.title = "Felix Hoffmann"'],
    ),
    "Which clients have projects owned by Zoe Park?": (
        "agency",
        'list client where projects.owner.name = "Zoe Park"',
        [
            "list client",
            'list client where projects.title = "Zoe Park"',
            'list client where projects.tasks.summary = "Zoe Park"',
            'list client where name = "Zoe Park"',
            'list person where name = "Zoe Park"',
        ],
    ),
    "Acme Corp 的项目有哪些": (
        "agency",
        'list project where client.name = "Acme Corp"',
        ["list project", 'list project where title = "Acme Corp"'],
    ),
}


def catalog_named(name: str, shop_catalog: Catalog) -> Catalog:
    return shop_catalog if name == "shop" else agency_catalog()


def issues(reading: Reading, plan: Plan, catalog: Catalog) -> list[str]:
    result = ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=plan.query_type,
        entity_type=plan.entity_type,
        template="t",
        plan_hash="h",
        rows=(),
        count=0,
    )
    answer = Answer(contract=plan.answer_contract or "clarify_or_fail", text="")  # type: ignore[arg-type]
    ctx = VerifyContext(tenant_id="t1", catalog=catalog, question=reading)
    return [
        i.message
        for i in question_covered(Subject(plan=plan, result=result, answer=answer, context=ctx))
    ]


def bound(text: str, catalog: Catalog) -> Plan:
    return normalize(load_plan(text), catalog, PlanContext(tenant_id="t1")).plan


@pytest.mark.parametrize("question", sorted(CASES))
def test_the_related_filter_covers_the_name(question: str, shop_catalog: Catalog) -> None:
    name, right, _ = CASES[question]
    catalog = catalog_named(name, shop_catalog)
    reading = read_question(question, catalog, values=VALUES)
    assert issues(reading, bound(right, catalog), catalog) == []
    planned = normalize(plan_from_reading(reading, catalog), catalog, PlanContext(tenant_id="t1"))
    assert issues(reading, planned.plan, catalog) == []
    assert [f.field for f in planned.plan.filters] == [
        f.field for f in bound(right, catalog).filters
    ]


@pytest.mark.parametrize("question", sorted(CASES))
def test_a_plan_without_it_or_on_another_path_is_refused(
    question: str, shop_catalog: Catalog
) -> None:
    name, _, wrong = CASES[question]
    catalog = catalog_named(name, shop_catalog)
    reading = read_question(question, catalog, values=VALUES)
    for text in wrong:
        assert issues(reading, bound(text, catalog), catalog), text


def test_a_plan_picking_one_of_several_paths_is_refused() -> None:
    catalog = agency_catalog()
    reading = read_question("Which tasks has Zoe Park?", catalog, values=VALUES)
    for text in (
        'list task where assignee.name = "Zoe Park"',
        'list task where project.owner.name = "Zoe Park"',
    ):
        found = issues(reading, bound(text, catalog), catalog)
        assert any("several relations" in m for m in found), found


def test_a_plan_naming_an_entity_three_relations_away_is_refused(shop_catalog: Catalog) -> None:
    reading = read_question(
        "Which products has Felix Hoffmann bought?", shop_catalog, values=VALUES
    )
    # the nearest the plan language reaches: the product's lines' order's customer id
    found = issues(reading, bound("list product", shop_catalog), shop_catalog)
    assert any("two relations" in m for m in found), found
