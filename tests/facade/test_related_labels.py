"""Questions naming an object of a related entity by its label, answered end to
end on both dialects: "Which orders did Felix Hoffmann place?" lists that
customer's orders, on the shop and on a second deployment (deployments.agency:
clients, projects, tasks, people), each checked against a plain SQL oracle of
the asking tenant's rows. An LLM's plan that drops the condition or puts it on
another path is never answered; a name several paths reach, or one three
relations away, clarifies."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from deployments.agency import agency_catalog
from deployments.shop import SHOP_CATALOG
from planner_doubles import ScriptedModel
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, AnswerResult, plan_and_answer
from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.planner import LLMPlanner

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)

SHOP_ORDERS_OF = """SELECT o.id FROM orders o JOIN customers c
    ON c.tenant_id = o.tenant_id AND c.id = o.customer_id
    WHERE o.tenant_id = :t AND c.name = :n"""
# the product's name, not the line's title: the oracle asks what the question means
SHOP_ORDERS_WITH = """SELECT DISTINCT o.id FROM orders o
    JOIN order_lines l ON l.tenant_id = o.tenant_id AND l.order_id = o.id
    JOIN products p ON p.tenant_id = l.tenant_id AND p.id = l.product_id
    WHERE o.tenant_id = :t AND p.name = :n"""
PROJECTS_OF = """SELECT p.id FROM projects p JOIN clients c
    ON c.tenant_id = p.tenant_id AND c.id = p.client_id
    WHERE p.tenant_id = :t AND c.name = :n"""
CLIENTS_OF_OWNER = """SELECT DISTINCT c.id FROM clients c
    JOIN projects p ON p.tenant_id = c.tenant_id AND p.client_id = c.id
    JOIN people o ON o.tenant_id = p.tenant_id AND o.id = p.owner_id
    WHERE c.tenant_id = :t AND o.name = :n"""
CLIENTS_OF_TASK = """SELECT DISTINCT c.id FROM clients c
    JOIN projects p ON p.tenant_id = c.tenant_id AND p.client_id = c.id
    JOIN tasks k ON k.tenant_id = p.tenant_id AND k.project_id = p.id
    WHERE c.tenant_id = :t AND k.summary = :n"""


def ask(
    engine: Engine, catalog: Catalog, question: str, tenant: str, model: ScriptedModel | None = None
) -> AnswerResult:
    planner = LLMPlanner(model) if model is not None else None
    options = AnswerOptions(now=NOW, catalog=catalog, planner=planner)
    return plan_and_answer(question, tenant, engine=engine, options=options)


def oracle(engine: Engine, sql: str, tenant: str, name: str) -> list[str]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text(sql), {"t": tenant, "n": name}).scalars()
        return sorted(str(r) for r in rows)


def ids(res: AnswerResult) -> list[str]:
    assert res.status == "answered", res.text
    return sorted(str(i["id"]) for i in res.data["items"])


@pytest.mark.parametrize(
    ("tenant", "question", "sql", "name"),
    [
        ("nordwind", "Which orders did Felix Hoffmann place?", SHOP_ORDERS_OF, "Felix Hoffmann"),
        ("nordwind", "Felix Hoffmann 的订单有哪些", SHOP_ORDERS_OF, "Felix Hoffmann"),
        ("sunrise", "Which orders did Zhang Wei place?", SHOP_ORDERS_OF, "Zhang Wei"),
        ("nordwind", "Which orders contain Garden Hose?", SHOP_ORDERS_WITH, "Garden Hose"),
        ("sunrise", "包含 Smart Watch 的订单有哪些", SHOP_ORDERS_WITH, "Smart Watch"),
    ],
)
def test_shop_orders_of_a_named_related_object(
    shop_engine: Engine, tenant: str, question: str, sql: str, name: str
) -> None:
    want = oracle(shop_engine, sql, tenant, name)
    assert want
    res = ask(shop_engine, load_catalog(SHOP_CATALOG), question, tenant)
    assert ids(res) == want
    assert sorted(e.entity_id for e in res.evidence) == want


@pytest.mark.parametrize(
    ("tenant", "question", "sql", "name"),
    [
        ("north", "Which projects does Acme Corp have?", PROJECTS_OF, "Acme Corp"),
        ("south", "Acme Corp 的项目有哪些", PROJECTS_OF, "Acme Corp"),
        (
            "north",
            "Which clients have projects owned by Omar Haddad?",
            CLIENTS_OF_OWNER,
            "Omar Haddad",
        ),
        ("south", "Zoe Park 负责的项目的客户有哪些", CLIENTS_OF_OWNER, "Zoe Park"),
        ("north", "Which clients have the task Fix login?", CLIENTS_OF_TASK, "Fix login"),
    ],
)
def test_agency_answers_through_its_relations(
    agency: Engine, tenant: str, question: str, sql: str, name: str
) -> None:
    want = oracle(agency, sql, tenant, name)
    assert want
    assert ids(ask(agency, agency_catalog(), question, tenant)) == want


def test_a_name_of_each_tenant_finds_its_own_rows_only(agency: Engine) -> None:
    """Both tenants have an "Acme Corp": each gets its own client's projects."""
    north = ids(ask(agency, agency_catalog(), "Which projects does Acme Corp have?", "north"))
    south = ids(ask(agency, agency_catalog(), "Which projects does Acme Corp have?", "south"))
    assert north == oracle(agency, PROJECTS_OF, "north", "Acme Corp") == ["1", "2"]
    assert south == oracle(agency, PROJECTS_OF, "south", "Acme Corp") == ["2"]


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("Which tasks has Zoe Park?", "several relations"),  # assignee or project owner
        ("List the comments of Acme Corp", "two relations"),  # three relations away
    ],
)
def test_agency_clarifies_what_it_cannot_place(agency: Engine, question: str, word: str) -> None:
    res = ask(agency, agency_catalog(), question, "north")
    assert res.status == "clarify", res.text
    assert word in res.text and not res.evidence


def refused_every_time(
    engine: Engine,
    catalog: Catalog,
    *,
    question: str,
    tenant: str,
    plans: tuple[str, ...],
    missing: str,
) -> None:
    for plan in plans:
        model = ScriptedModel(plan)
        res = ask(engine, catalog, question, tenant, model)
        assert res.status != "answered", (plan, res.text)
        assert not res.evidence and not (res.data or {}).get("items"), plan
        # re-planned with the verifier's sentence naming the missing condition
        assert len(model.prompts) > 1 and missing in model.prompts[-1], plan


def test_an_llm_plan_without_the_condition_or_on_another_path_is_never_answered(
    shop_engine: Engine, agency: Engine
) -> None:
    refused_every_time(
        shop_engine,
        load_catalog(SHOP_CATALOG),
        question="Which orders did Felix Hoffmann place?",
        tenant="nordwind",
        plans=("list order", 'list order where lines.title = "Felix Hoffmann"'),
        missing="customer.name",
    )
    refused_every_time(
        agency,
        agency_catalog(),
        question="Which clients have projects owned by Zoe Park?",
        tenant="north",
        plans=("list client", 'list client where projects.tasks.summary = "Zoe Park"'),
        missing="projects.owner.name",
    )


def test_an_llm_plan_with_the_related_condition_is_answered(
    shop_engine: Engine, agency: Engine
) -> None:
    want = oracle(shop_engine, SHOP_ORDERS_OF, "nordwind", "Felix Hoffmann")
    model = ScriptedModel('list order where 客户.name = "Felix Hoffmann"')
    res = ask(
        shop_engine, load_catalog(SHOP_CATALOG), "Felix Hoffmann 的订单有哪些", "nordwind", model
    )
    assert ids(res) == want and len(model.prompts) == 1
    want = oracle(agency, PROJECTS_OF, "south", "Acme Corp")
    model = ScriptedModel('list project where client.name = "Acme Corp"')
    res = ask(agency, agency_catalog(), "Acme Corp 的项目有哪些", "south", model)
    assert ids(res) == want and len(model.prompts) == 1
