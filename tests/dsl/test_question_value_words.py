"""A value said with a Chinese classifier ("图书类的商品", "A股类项目") is the value, and
"made" in "payments were made by card" says nothing of its own: both read on three
catalogs as the plain value would."""

from __future__ import annotations

import pytest
from deployments.fixtures import TICKETS_CATALOG
from deployments.shop import SHOP_CATALOG

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.dsl.catalog.load import demo_catalog
from qdsl.dsl.ir import Operator, QueryType
from qdsl.dsl.question import read_question

_EQ, _ALIAS = Operator.EQUALS, Operator.EQUALS_OR_ALIAS


def _catalog(name: str) -> Catalog:
    if name == "demo":
        return demo_catalog()
    return load_catalog(SHOP_CATALOG if name == "shop" else TICKETS_CATALOG)


@pytest.mark.parametrize(
    ("cat", "question", "qt", "condition"),
    [
        ("shop", "图书类的商品有哪些", QueryType.LIST, ("category", _EQ, "books")),
        ("shop", "有多少图书类商品", QueryType.COUNT, ("category", _EQ, "books")),
        ("demo", "A股类项目有几个", QueryType.COUNT, ("market_theme", _ALIAS, "A股")),
        ("demo", "有没有港股类的项目", QueryType.EXISTENCE, ("market_theme", _ALIAS, "港股")),
        ("tickets", "紧急类工单有多少", QueryType.COUNT, ("priority", _EQ, "urgent")),
        ("shop", "How many payments were made by card?", QueryType.COUNT, ("method", _EQ, "card")),
        (
            "tickets",
            "How many tickets were made by phone?",
            QueryType.COUNT,
            ("channel", _EQ, "phone"),
        ),
    ],
)
def test_the_value_is_read_whole(
    cat: str, question: str, qt: QueryType, condition: tuple[str, Operator, str]
) -> None:
    r = read_question(question, _catalog(cat))
    assert r.problems == ()
    assert r.query_type is qt
    assert [(c.field, c.operator, c.value) for c in r.conditions] == [condition]


def test_a_word_that_only_begins_with_the_classifier_is_not_one() -> None:
    # 类似 is "similar", not a classifier
    r = read_question("图书类似的商品", _catalog("shop"))
    assert any(p.text == "类似" for p in r.problems)


@pytest.mark.parametrize(
    ("question", "op"),
    [
        ("How many projects with a budget no more than 100000 are there?", Operator.LTE),
        ("How many projects with a budget <= 100000 are there?", Operator.LTE),
        ("How many projects whose budget is ≥ 100000 are there?", Operator.GTE),
        ("预算>100000的项目有几个", Operator.GT),
        ("How many projects whose budget is < 100000 are there?", Operator.LT),
        ("How many projects with a budget of at least 100000 are there?", Operator.GTE),
    ],
)
def test_with_a_field_and_a_bound_is_the_bound_not_the_fields_presence(
    question: str, op: Operator
) -> None:
    # found by the generated deployments: "with a headcount no more than 1" was read as
    # the headcount being set, its bound put on the next number field; and a bound
    # written as a symbol ("<= 100000") was read as the value itself
    r = read_question(question, _catalog("demo"))
    assert r.problems == ()
    assert [(c.field, c.operator, c.value) for c in r.conditions] == [("budget", op, 100000)]
