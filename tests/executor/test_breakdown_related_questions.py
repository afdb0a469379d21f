"""Questions grouped across relations, read and answered on two catalogs (the
library of test_breakdown_related.py, the online shop), SQLite and PostgreSQL:
"How many books does each author have?" is one group per author, "What is the
total paid by customer tier?" the payments' measure grouped two relations away.
Careless plans for them (the grouping dropped, another one, the rows counted, a
path not declared) are never answered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from fixed_planner import FixedPlanner
from test_breakdown_related import LIBRARY, _load
from test_breakdown_related import library as library  # noqa: PLC0414 - a fixture

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.question import read_question
from qdsl.facts.db import make_engine


@pytest.mark.parametrize(
    ("question", "entity", "group_by", "measure"),
    [
        ("How many orders does each customer have?", "order", "customer", None),
        ("每个客户有多少订单", "order", "customer", None),
        ("How many orders per customer tier?", "order", "customer.tier", None),
        (
            "What is the total paid by customer tier?",
            "payment",
            "order.customer.tier",
            "total_paid",
        ),
        ("按会员等级统计支付总额", "payment", "order.customer.tier", "total_paid"),
        ("每个品类的销量是多少", "order_line", "product.category", "units_sold"),
        ("total paid per customer", "payment", "order.customer", "total_paid"),
    ],
)
def test_a_grouping_across_relations_is_read_on_the_shop(
    shop_catalog: Catalog, question: str, entity: str, group_by: str, measure: str | None
) -> None:
    r = read_question(question, shop_catalog)
    assert r.understood, r.problems
    assert (r.query_type, r.entity, r.measure) == (QueryType.BREAKDOWN, entity, measure)
    assert r.group_by == ((group_by, None),)


@pytest.mark.parametrize(
    ("question", "group_by", "function"),
    [
        ("How many books does each author have?", "writer", None),
        ("每个作者有多少书", "writer", None),
        ("average pages of books by author", "writer", "avg"),
    ],
)
def test_a_grouping_across_relations_is_read_on_a_library(
    question: str, group_by: str, function: str | None
) -> None:
    r = read_question(question, LIBRARY)
    assert r.understood, r.problems
    assert (r.query_type, r.entity, r.function) == (QueryType.BREAKDOWN, "book", function)
    assert r.group_by == ((group_by, None),)


_AUTHORS = [
    {"tenant_id": "t1", "id": 1, "name": "Ann", "country": "DE", "born": None, "secret": "x"},
    {"tenant_id": "t1", "id": 2, "name": "Ann", "country": "FR", "born": None, "secret": "x"},
    {"tenant_id": "t2", "id": 3, "name": "Bo", "country": "DE", "born": None, "secret": "x"},
]
# book 4 names author 3, who is the other tenant's: no author of t1
_BOOKS = [
    {"tenant_id": "t1", "author_id": a, "pages": p}
    for a, p in ((1, 10), (1, 20), (2, 5), (3, 7), (None, 1))
] + [{"tenant_id": "t2", "author_id": 3, "pages": 100}]


@pytest.mark.parametrize("question", ["How many books does each author have?", "每个作者有多少书"])
def test_the_library_answers_books_per_author(library: sa.Engine, question: str) -> None:
    _load(library, _AUTHORS, _BOOKS)
    options = AnswerOptions(catalog=LIBRARY)
    res = plan_and_answer(question, "t1", engine=library, options=options)
    assert res.status == "answered", res.text
    got = {(g["keys"][0], g["labels"][0]): g["value"] for g in res.data["groups"]}
    # two authors share a name and stay two groups; the other tenant's author is none
    assert got == {("1", "Ann"): 2, ("2", "Ann"): 1, (None, None): 2}
    assert res.verdict.ok


@pytest.fixture
def shop_engine(shop_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(shop_url)
    yield engine
    engine.dispose()


def _orders_per_customer(engine: sa.Engine, tenant: str) -> dict[Any, int]:
    with engine.connect() as conn:
        names = dict(
            conn.execute(
                sa.text("SELECT id, name FROM customers WHERE tenant_id = :t"), {"t": tenant}
            ).all()
        )
        rows = conn.execute(
            sa.text("SELECT customer_id FROM orders WHERE tenant_id = :t"), {"t": tenant}
        ).all()
    return dict(Counter(names.get(c) for (c,) in rows))


@pytest.mark.parametrize("tenant", ["nordwind", "sunrise"])
def test_the_shop_answers_orders_per_customer(
    shop_engine: sa.Engine, shop_catalog: Catalog, tenant: str
) -> None:
    options = AnswerOptions(catalog=shop_catalog)
    res = plan_and_answer("每个客户有多少订单", tenant, engine=shop_engine, options=options)
    assert res.status == "answered", res.text
    got = {g["labels"][0]: g["value"] for g in res.data["groups"]}
    assert got == _orders_per_customer(shop_engine, tenant)


_TIER = "What is the total paid by customer tier?"


@pytest.mark.parametrize(
    "plan",
    [
        "aggregate payment measure total_paid",  # the grouping dropped
        "breakdown payment measure total_paid group by method",  # another grouping
        "breakdown payment measure total_paid group by order.customer.city",
        "breakdown payment group by order.customer.tier",  # the rows counted
        "breakdown payment measure average_payment group by order.customer.tier",
        "breakdown payment measure total_paid group by order.customer",  # per customer
        "breakdown customer group by tier",  # another entity's count
    ],
)
def test_a_careless_plan_grouped_across_relations_is_never_answered(
    shop_engine: sa.Engine, shop_catalog: Catalog, plan: str
) -> None:
    options = AnswerOptions(planner=FixedPlanner(plan), catalog=shop_catalog)
    res = plan_and_answer(_TIER, "nordwind", engine=shop_engine, options=options)
    assert res.status in {"clarify", "refused"}, (plan, res.status, res.text)


def test_the_right_plan_grouped_across_relations_is_answered(
    shop_engine: sa.Engine, shop_catalog: Catalog
) -> None:
    plan = "breakdown payment measure sum(amount) group by order.customer.tier"
    options = AnswerOptions(planner=FixedPlanner(plan), catalog=shop_catalog)
    res = plan_and_answer(_TIER, "nordwind", engine=shop_engine, options=options)
    assert res.status == "answered", res.text
