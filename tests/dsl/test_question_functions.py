"""The function a measure question asks, read on three catalogs (the demo, the
online shop, the HR catalog with its salary made aggregable), zh and en:
total / 合计 / 总 -> sum, average / 平均 -> avg, the highest / 最高 … asked as a
value -> max (min likewise), how many distinct / 多少种 -> count_distinct, a
declared measure's words -> that measure. Who holds the highest value stays a
ranked list; per-group words and measures the catalog does not allow stay
refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from qdsl.dsl.catalog import Catalog, demo_catalog, load_catalog
from qdsl.dsl.ir import Aggregation, QueryType
from qdsl.dsl.question import problems_text, read_question

NOW = datetime(2026, 11, 4, 15, 30, tzinfo=UTC)
DEPLOYMENTS = Path(__file__).parents[1] / "deployments"


def _staff() -> Catalog:
    catalog = load_catalog(DEPLOYMENTS / "staff" / "catalog.toml")
    ent = catalog.entities["employee"]
    aggs = tuple(Aggregation(a) for a in ("sum", "avg", "min", "max"))
    salary = ent.fields["salary"].model_copy(update={"aggregations": aggs})
    city = ent.fields["city"].model_copy(update={"aggregations": (Aggregation.COUNT_DISTINCT,)})
    fields = {**ent.fields, "salary": salary, "city": city}
    kinds = (*ent.query_types, QueryType.AGGREGATE)
    ent = ent.model_copy(update={"fields": fields, "query_types": kinds})
    return catalog.model_copy(update={"entities": {**catalog.entities, "employee": ent}})


CATALOGS = {
    "demo": demo_catalog(),
    "shop": load_catalog(DEPLOYMENTS / "shop" / "catalog.toml"),
    "staff": _staff(),
}

# (catalog, question, entity, function, field, declared measure, conditions' fields)
READS: list[tuple[str, str, str, str | None, str | None, str | None, set[str]]] = [
    (
        "demo",
        "What is the average budget of active projects?",
        "project",
        "avg",
        "budget",
        None,
        {"status"},
    ),
    ("demo", "活跃项目的平均预算是多少", "project", "avg", "budget", None, {"status"}),
    ("demo", "活跃项目的总预算是多少", "project", "sum", "budget", None, {"status"}),
    ("demo", "What is the highest budget?", "project", "max", "budget", None, set()),
    ("demo", "最高预算是多少", "project", "max", "budget", None, set()),
    ("demo", "项目预算最低是多少", "project", "min", "budget", None, set()),
    (
        "staff",
        "What is the total salary of employees in Shanghai?",
        "employee",
        "sum",
        "salary",
        None,
        {"city"},
    ),
    ("staff", "上海员工的工资合计是多少", "employee", "sum", "salary", None, {"city"}),
    ("staff", "员工的平均工资是多少", "employee", "avg", "salary", None, set()),
    (
        "staff",
        "What is the mean salary of senior employees?",
        "employee",
        "avg",
        "salary",
        None,
        {"level"},
    ),
    ("staff", "What is the maximum salary?", "employee", "max", "salary", None, set()),
    ("staff", "最高工资是多少", "employee", "max", "salary", None, set()),
    (
        "staff",
        "What is the lowest salary of remote employees?",
        "employee",
        "min",
        "salary",
        None,
        {"remote"},
    ),
    ("staff", "员工有多少种城市", "employee", "count_distinct", "city", None, set()),
    (
        "staff",
        "How many distinct city are there for employees?",
        "employee",
        "count_distinct",
        "city",
        None,
        set(),
    ),
    ("shop", "客单价是多少", "payment", None, None, "average_order_value", set()),
    (
        "shop",
        "What is the average order value of card payments?",
        "payment",
        None,
        None,
        "average_order_value",
        {"method"},
    ),
    ("shop", "支付总额是多少", "payment", None, None, "total_paid", set()),
    (
        "shop",
        "What is the average payment amount?",
        "payment",
        None,
        None,
        "average_payment",
        set(),
    ),
    ("shop", "What is the highest unit price?", "order_line", "max", "unit_price", None, set()),
    (
        "shop",
        "What is the average list price of books?",
        "product",
        "avg",
        "list_price",
        None,
        {"category"},
    ),
]


Read = tuple[str, str, str, str | None, str | None, str | None, set[str]]


@pytest.mark.parametrize("case", READS, ids=lambda c: c[1])
def test_the_function_asked_is_read(case: Read) -> None:
    cat, question, entity, fn, field, declared, conds = case
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert r.understood, problems_text(r.problems, r.entity, r.language)
    assert (r.query_type, r.entity) == (QueryType.AGGREGATE, entity)
    assert (r.function, r.measure) == (fn, declared)
    assert r.projection == ((field,) if field else ()) or declared is not None
    assert {c.field for c in r.conditions} == conds
    assert not r.sort and r.limit is None


@pytest.mark.parametrize(
    ("cat", "question"),
    [
        ("demo", "Which project has the highest budget?"),
        ("demo", "哪个项目预算最高"),
        ("staff", "Who has the highest salary?"),
        ("staff", "哪个员工工资最高"),
        ("staff", "工资最高的3个员工"),
    ],
)
def test_who_holds_the_highest_value_is_a_ranked_list(cat: str, question: str) -> None:
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert r.query_type is QueryType.LIST and r.sort, (r.query_type, r.problems)
    assert r.function is None


@pytest.mark.parametrize(
    ("cat", "question", "detail"),
    [
        ("demo", "项目的平均标题是多少", "average"),  # no field averages
        ("staff", "员工有多少种职级", "count_distinct"),  # level does not allow it
        ("shop", "What is the average quantity of products?", "average"),  # another entity's field
        ("demo", "有没有总预算超过100万的项目", "sum"),  # asks for projects
    ],
)
def test_what_the_catalog_or_the_kind_cannot_state_is_refused(
    cat: str, question: str, detail: str
) -> None:
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert not r.understood
    assert detail in {p.detail for p in r.problems}, problems_text(r.problems, r.entity, r.language)


@pytest.mark.parametrize(
    "question", ["每个城市的平均工资是多少", "What is the average salary by city?"]
)
def test_a_function_per_group_is_a_breakdown_of_it(question: str) -> None:
    r = read_question(question, CATALOGS["staff"], now=NOW)
    assert r.understood, problems_text(r.problems, r.entity, r.language)
    assert (r.query_type, r.function, r.projection) == (QueryType.BREAKDOWN, "avg", ("salary",))
    assert r.group_by == (("city", None),)
