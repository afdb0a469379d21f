"""Conditions on related rows themselves: `payments is null` (an order with no
payment), `orders is not null` (a customer with some order), across one or two
declared relations, on SQLite and PostgreSQL.

The executor's answer equals a Python oracle over the rows for every declared
path of the shop and both tenants; ids are unique per tenant only, so a related
row of the other tenant shares its key with one of ours, and the oracle that
forgets the tenant answers differently (the executor must never agree with it).
Questions ("Are there any orders without a payment?", "没有评论的任务有哪些")
are read and answered on the shop and on the agency, checked against SQL; a
careless plan for them (the condition dropped, reversed, on another relation,
or on a field of the related rows) is never answered; a "none of them with X"
the plan language cannot state clarifies."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from deployments.agency import agency_catalog
from deployments.shop import SHOP_TENANTS, Rows, reached
from fixed_planner import FixedPlanner
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, AnswerResult, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog.relations import MAX_HOPS, RelationStep
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Operator
from qdsl.dsl.normalize import normalize
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.question import read_question
from qdsl.executor.run import execute

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def declared_paths(catalog: Catalog) -> Iterator[tuple[str, tuple[RelationStep, ...]]]:
    """(entity, steps) for every declared path of at most MAX_HOPS relations."""

    def walk(
        entity: str, here: str, steps: tuple[RelationStep, ...]
    ) -> Iterator[tuple[str, tuple[RelationStep, ...]]]:
        for step in catalog.relation_steps.get(here, {}).values():
            path = (*steps, step)
            yield entity, path
            if len(path) < MAX_HOPS:
                yield from walk(entity, step.target, path)

    for name in catalog.entities:
        yield from walk(name, name, ())


def with_related(
    catalog: Catalog,
    rows: Rows,
    entity: str,
    steps: tuple[RelationStep, ...],
    tenant: str,
    *,
    same_tenant: bool = True,
) -> set[str]:
    """Ids of the tenant's `entity` rows that reach some row through `steps`."""
    return {
        str(row["id"])
        for row in rows[catalog.entities[entity].table]
        if row["tenant_id"] == tenant and reached(rows, row, steps, same_tenant=same_tenant)
    }


def _ids(plan: str, catalog: Catalog, engine: Engine, tenant: str) -> set[str]:
    result = execute(parse_text(plan), catalog, engine, tenant)
    assert all(r.tenant_id == tenant for r in result.rows)
    assert result.count == len(result.rows), "the test reads every match"
    return {r.entity_id for r in result.rows}


def test_related_rows_match_the_oracle_on_every_declared_path(
    shop: tuple[Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, rows = shop
    checked = leaks_possible = 0
    for entity, steps in declared_paths(shop_catalog):
        path = ".".join(s.name for s in steps)
        everyone = {
            str(r["id"]) for r in rows[shop_catalog.entities[entity].table] if r["tenant_id"]
        }
        for tenant in SHOP_TENANTS:
            mine = {
                str(r["id"])
                for r in rows[shop_catalog.entities[entity].table]
                if r["tenant_id"] == tenant
            }
            some = with_related(shop_catalog, rows, entity, steps, tenant)
            careless = with_related(shop_catalog, rows, entity, steps, tenant, same_tenant=False)
            assert (
                _ids(
                    f"list {entity} where {path} is not null limit 200",
                    shop_catalog,
                    engine,
                    tenant,
                )
                == some
            ), (path, tenant)
            assert (
                _ids(f"list {entity} where {path} is null limit 200", shop_catalog, engine, tenant)
                == mine - some
            ), (path, tenant)
            leaks_possible += careless != some
            checked += 1
        assert everyone
    assert checked >= 20
    # the data tells a tenant-bound test of related rows from a careless one
    assert leaks_possible >= 2, leaks_possible


def test_a_relation_alone_takes_only_is_null(shop_catalog: Catalog) -> None:
    plan = normalize(parse_text("exists order where 支付 is null"), shop_catalog).plan
    assert [(f.field, f.operator, f.value) for f in plan.filters] == [
        ("payments", Operator.IS_NULL, True)
    ]
    for text, code in [
        ('list order where payments = "x"', "validation/operator_not_allowed"),
        ("list order where payments in (1, 2)", "validation/operator_not_allowed"),
        ("list order where refunds is null", "validation/unknown_field"),
        (
            "list order_line where order.customer.orders is null",
            "validation/relation_path_too_long",
        ),
    ]:
        with pytest.raises(PlanError) as caught:
            normalize(parse_text(text), shop_catalog)
        assert caught.value.code == code, text


ORDERS_WITHOUT_PAYMENT = """SELECT o.id FROM orders o WHERE o.tenant_id = :t AND NOT EXISTS
    (SELECT 1 FROM payments p WHERE p.tenant_id = o.tenant_id AND p.order_id = o.id)"""
CUSTOMERS_WITHOUT_ORDERS = """SELECT c.id FROM customers c WHERE c.tenant_id = :t AND NOT EXISTS
    (SELECT 1 FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id)"""
CUSTOMERS_WITH_ORDERS = """SELECT c.id FROM customers c WHERE c.tenant_id = :t AND EXISTS
    (SELECT 1 FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id)"""
TASKS_WITHOUT_COMMENTS = """SELECT k.id FROM tasks k WHERE k.tenant_id = :t AND NOT EXISTS
    (SELECT 1 FROM comments c WHERE c.tenant_id = k.tenant_id AND c.task_id = k.id)"""


def _oracle(engine: Engine, sql: str, tenant: str) -> list[str]:
    with engine.connect() as conn:
        return sorted(str(r) for r in conn.execute(sa.text(sql), {"t": tenant}).scalars())


def _ask(
    engine: Engine, catalog: Catalog, question: str, tenant: str, plan: str | None = None
) -> AnswerResult:
    options = AnswerOptions(now=NOW, catalog=catalog, planner=FixedPlanner(plan) if plan else None)
    return plan_and_answer(question, tenant, engine=engine, options=options)


def _answered_ids(res: AnswerResult) -> list[str]:
    assert res.status == "answered", res.text
    return sorted(str(e.entity_id) for e in res.evidence)


@pytest.mark.parametrize(
    ("question", "tenant", "sql", "path", "none"),
    [
        (
            "Are there any orders without a payment?",
            "nordwind",
            ORDERS_WITHOUT_PAYMENT,
            "payments",
            True,
        ),
        ("有没有未支付的订单", "sunrise", ORDERS_WITHOUT_PAYMENT, "payments", True),
        ("Which orders have no payment?", "sunrise", ORDERS_WITHOUT_PAYMENT, "payments", True),
        ("没有付款的订单有哪些", "nordwind", ORDERS_WITHOUT_PAYMENT, "payments", True),
        ("Which customers have no orders?", "nordwind", CUSTOMERS_WITHOUT_ORDERS, "orders", True),
        ("没有订单的客户有哪些", "sunrise", CUSTOMERS_WITHOUT_ORDERS, "orders", True),
        ("有订单的客户有哪些", "nordwind", CUSTOMERS_WITH_ORDERS, "orders", False),
    ],
)
def test_shop_questions_on_related_rows(  # noqa: PLR0917 - the parameters of one case
    shop_engine: Engine,
    shop_catalog: Catalog,
    question: str,
    tenant: str,
    sql: str,
    path: str,
    none: bool,
) -> None:
    reading = read_question(question, shop_catalog, now=NOW)
    assert reading.problems == ()
    assert [(c.field, c.operator, c.value) for c in reading.conditions] == [
        (path, Operator.IS_NULL, none)
    ]
    want = _oracle(shop_engine, sql, tenant)
    res = _ask(shop_engine, shop_catalog, question, tenant)
    if not want:
        assert res.status == "answered" and not res.evidence, res.text
        return
    assert _answered_ids(res) == want


@pytest.mark.parametrize(
    ("question", "tenant"),
    [
        ("Which tasks have no comments?", "north"),
        ("没有评论的任务有哪些", "south"),
        ("How many tasks have no comments?", "north"),
    ],
)
def test_agency_tasks_without_comments(agency: Engine, question: str, tenant: str) -> None:
    want = _oracle(agency, TASKS_WITHOUT_COMMENTS, tenant)
    assert want
    res = _ask(agency, agency_catalog(), question, tenant)
    assert res.status == "answered", res.text
    if "How many" in question:
        assert res.data["count"] == len(want)
    else:
        assert _answered_ids(res) == want


@pytest.mark.parametrize(
    "question",
    [
        # two declared paths reach a person's tasks (as assignee, through owned projects)
        "Which people have no tasks?",
        # "none of them by card" is no condition on some related row
        "Which customers have no orders in the app channel?",
    ],
)
def test_what_the_plan_language_cannot_state_is_not_read_as_rows(
    question: str, shop_catalog: Catalog
) -> None:
    catalog = agency_catalog() if "people" in question else shop_catalog
    reading = read_question(question, catalog, now=NOW)
    assert reading.problems, reading.conditions


@pytest.mark.parametrize(
    "plan",
    [
        "exists order",  # the condition dropped
        "exists order where payments is not null",  # reversed
        "exists order where customer is null",  # another relation
        "exists order where payments.refunded = false",  # a field of the rows instead
        'exists order where status = "placed"',  # another condition
    ],
)
def test_careless_plans_for_no_related_row_are_not_answered(
    shop_engine: Engine, shop_catalog: Catalog, plan: str
) -> None:
    res = _ask(
        shop_engine, shop_catalog, "Are there any orders without a payment?", "nordwind", plan
    )
    assert res.status != "answered", (plan, res.text)
