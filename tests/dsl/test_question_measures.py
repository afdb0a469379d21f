"""Words that ask for a sum, an average or one answer per group are never filler.

A count per group is a breakdown (its grouping read). Where the catalog lets no
named field be aggregated so, or the question asks a sum or average per group
(which no plan states yet), such a question is not understood: each word is a
problem (reason `unsupported`) whose sentence, in the question's language, names
what cannot be answered; where it does, the question reads as an aggregate with
its function (tests/dsl/test_question_functions.py). Read on four catalogs (an
insurer's premiums, the HR catalog, the demo, the support desk), with the words'
harmless uses ("每个项目的状态", "List the top 3 projects by budget", "by phone",
"the total number of") read as before.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from qdsl.dsl.catalog import demo_catalog, load_catalog
from qdsl.dsl.ir import Operator, QueryType, SortDirection
from qdsl.dsl.linking import LinkedValue
from qdsl.dsl.question import problems_text, read_question

NOW = datetime(2026, 11, 4, 15, 30, tzinfo=UTC)
DEPLOYMENTS = Path(__file__).parents[1] / "deployments"
CATALOGS = {
    "premiums": load_catalog(DEPLOYMENTS / "premiums" / "catalog.toml"),
    "staff": load_catalog(DEPLOYMENTS / "staff" / "catalog.toml"),
    "tickets": load_catalog(DEPLOYMENTS / "tickets" / "catalog.toml"),
    "demo": demo_catalog(),
}

# (catalog, question, what each word asks for: the problems' details)
ASKING_MORE: list[tuple[str, str, set[str]]] = [
    # the row: a sum per group, of a field this catalog lets no one sum
    (
        "premiums",
        "What is the total amount of premiums paid by policy number?",
        {"sum"},
    ),
    ("premiums", "保费一共多少钱", {"sum"}),
    ("premiums", "每个保单的保费合计是多少", {"sum"}),
    ("premiums", "What is the sum of premium amounts?", {"sum"}),
    ("premiums", "What is the average premium amount?", {"average"}),
    ("premiums", "What is the mean amount of premiums?", {"average"}),
    ("premiums", "保费的平均金额是多少", {"average"}),
    ("premiums", "How much premium was paid online?", {"sum"}),
    ("staff", "员工的平均工资是多少", {"average"}),
    ("staff", "上海员工的工资总额是多少", {"sum"}),
    ("demo", "How many tasks does each project have?", {"breakdown"}),
    ("tickets", "退款总额是多少", {"sum"}),
    ("tickets", "What is the total refund amount of urgent tickets?", {"sum"}),
    ("tickets", "What is the average refund?", {"average"}),
]


# A count per group is a breakdown: (catalog, question, the field it groups by)
BREAKDOWNS: list[tuple[str, str, str]] = [
    ("premiums", "How many premiums per channel?", "channel"),
    ("premiums", "各渠道的保费分别有多少", "channel"),
    ("premiums", "Give me a breakdown of premiums by channel", "channel"),
    ("staff", "How many employees by city?", "city"),
    ("staff", "每个城市有多少员工", "city"),
    ("demo", "How many projects by status?", "status"),
    ("demo", "各状态的项目分别有多少个", "status"),
    ("tickets", "How many tickets per channel?", "channel"),
    ("tickets", "每个渠道有多少个工单", "channel"),
    ("tickets", "按优先级统计工单数量", "priority"),
    ("demo", "How many projects by budget?", "budget"),
]


@pytest.mark.parametrize(("cat", "question", "field"), BREAKDOWNS)
def test_a_count_per_group_is_a_breakdown(cat: str, question: str, field: str) -> None:
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert r.understood, problems_text(r.problems, r.entity, r.language)
    assert (r.query_type, r.group_by) == (QueryType.BREAKDOWN, ((field, None),))


@pytest.mark.parametrize(("cat", "question", "asks"), ASKING_MORE)
def test_a_question_asking_more_than_a_list_is_not_understood(
    cat: str, question: str, asks: set[str]
) -> None:
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert not r.understood
    unsupported = {p.detail for p in r.problems if p.reason == "unsupported"}
    assert unsupported == asks, problems_text(r.problems, r.entity, r.language)
    text = problems_text(r.problems, r.entity, r.language)
    said = ("无法回答", "cannot be answered")[r.language == "en"]
    assert said in text


def test_the_sentence_names_the_words_and_the_fields_in_the_questions_language() -> None:
    cat = CATALOGS["premiums"]
    r = read_question("What is the total amount of premiums paid by policy number?", cat, now=NOW)
    text = problems_text(r.problems, r.entity, r.language)
    assert "“total” asks for a total (a sum), which cannot be answered here" in text
    assert "(fields: amount)" in text
    r = read_question("每个保单的保费合计是多少", cat, now=NOW)
    text = problems_text(r.problems, r.entity, r.language)
    assert "“合计”要求求和（合计）" in text
    r = read_question("Which premiums are there per each?", cat, now=NOW)
    text = problems_text(r.problems, r.entity, r.language)
    assert "asks for one answer per group" in text, text


Cond = tuple[str, Operator, object]

# The same words where they ask nothing more: (catalog, question, query type, conditions)
HARMLESS: list[tuple[str, str, QueryType, set[Cond]]] = [
    ("tickets", "What is the total number of tickets?", QueryType.COUNT, set()),
    ("tickets", "How many tickets in total?", QueryType.COUNT, set()),
    ("demo", "一共有多少个项目", QueryType.COUNT, set()),
    ("demo", "项目总数是多少", QueryType.COUNT, set()),
    (
        "tickets",
        "How many tickets came in by phone?",
        QueryType.COUNT,
        {("channel", Operator.EQUALS, "phone")},
    ),
    ("demo", "List every project", QueryType.LIST, set()),
    ("staff", "List employees sorted by salary", QueryType.LIST, set()),
]


@pytest.mark.parametrize(("cat", "question", "qt", "expected"), HARMLESS)
def test_the_same_words_where_they_ask_nothing_more(
    cat: str, question: str, qt: QueryType, expected: set[Cond]
) -> None:
    r = read_question(question, CATALOGS[cat], now=NOW)
    assert r.problems == (), problems_text(r.problems, r.entity, r.language)
    assert r.query_type is qt
    assert {(c.field, c.operator, c.value) for c in r.conditions} == expected


def test_a_total_over_all_objects_names_only_the_total() -> None:
    # 所有 ("all") is no presence of a field named 项目 (有项目)
    r = read_question("所有项目的预算合计是多少", CATALOGS["demo"], now=NOW)
    assert r.understood and not r.conditions, r.problems
    assert (r.query_type, r.function, r.projection) == (QueryType.AGGREGATE, "sum", ("budget",))


def test_each_of_the_asked_objects_is_a_list_showing_the_field() -> None:
    """ "每个项目的状态": every project, its status shown; with a count word ("每个项目的
    预算是多少") it may ask a count per project, and clarifies."""
    demo = CATALOGS["demo"]
    for question, field in (
        ("每个项目的状态", "status"),
        ("Show the budget of each project", "budget"),
    ):
        r = read_question(question, demo, now=NOW)
        assert r.understood, problems_text(r.problems, r.entity, r.language)
        assert (r.query_type, r.projection) == (QueryType.LIST, (field,))
    r = read_question("每个项目的预算是多少", demo, now=NOW)
    assert [p.detail for p in r.problems] == ["breakdown"]


def test_by_a_field_sorts_a_list_and_groups_a_count() -> None:
    demo = CATALOGS["demo"]
    r = read_question("List the top 3 projects by budget", demo, now=NOW)
    assert (r.sort, r.limit) == ((("budget", SortDirection.DESC),), 3)
    r = read_question("How many projects by budget?", demo, now=NOW)
    assert (r.query_type, r.group_by) == (QueryType.BREAKDOWN, (("budget", None),))


def test_respectively_over_named_objects_is_each_of_them() -> None:
    r = read_question("项目 64 和 65 的预算分别是多少", CATALOGS["demo"], now=NOW)
    assert not [p for p in r.problems if p.reason == "unsupported"]
    assert r.ids == ("64", "65") and "budget" in r.projection


def test_by_before_a_name_is_no_grouping() -> None:
    """ "tickets by Contoso Ltd": a value the tenant's data links, or unplaced words."""
    tickets = CATALOGS["tickets"]
    linked = {"contoso ltd": (LinkedValue("ticket", "requester", "Contoso Ltd"),)}
    r = read_question("Are there tickets by Contoso Ltd?", tickets, now=NOW, values=linked)
    assert r.understood
    assert {(c.field, c.value) for c in r.conditions} == {("requester", "Contoso Ltd")}
    r = read_question("Which premiums were created by Alice?", CATALOGS["premiums"], now=NOW)
    assert not r.understood
    assert "Alice" in [p.text for p in r.problems]
    assert not [p for p in r.problems if p.reason == "unsupported"]
