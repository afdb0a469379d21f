"""Question accounting: every span of a question, per kind, zh and en, on two catalogs.

The demo catalog and a deployer's support-desk catalog (tests/deployments/
tickets) are read by the same code; nothing here is special to either.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from qdsl.dsl.catalog import (
    Catalog,
    CatalogError,
    catalog_from_mapping,
    demo_catalog,
    load_catalog,
)
from qdsl.dsl.ir import Operator, QueryType, SortDirection
from qdsl.dsl.linking import LinkedValue
from qdsl.dsl.question import Kind, Reading, problems_text, read_question
from qdsl.dsl.question.dates import find_dates
from qdsl.dsl.question.numbers import find_numbers
from qdsl.dsl.textnorm import normalize_text

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DEMO = demo_catalog()
TICKETS = load_catalog(Path(__file__).parents[1] / "deployments" / "tickets" / "catalog.toml")
CATALOGS = {"demo": DEMO, "tickets": TICKETS}

Cond = tuple[str, Operator, object]


def read(question: str, catalog: Catalog = DEMO, **kw: object) -> Reading:
    return read_question(question, catalog, now=NOW, **kw)  # type: ignore[arg-type]


def conds(r: Reading) -> set[Cond]:
    return {(c.field, c.operator, c.value) for c in r.conditions}


_Q, _O = QueryType, Operator
Y2026 = ("2026-01-01T00:00:00+00:00", "2027-01-01T00:00:00+00:00")

# (catalog, question, query type, entity, conditions)
READINGS: list[tuple[str, str, QueryType, str, set[Cond]]] = [
    (
        "demo",
        "帮我看看系统里面有没有 A 股项目",
        _Q.EXISTENCE,
        "project",
        {("market_theme", _O.EQUALS_OR_ALIAS, "A股")},
    ),
    (
        "demo",
        "Are there any A-share projects?",
        _Q.EXISTENCE,
        "project",
        {("market_theme", _O.EQUALS_OR_ALIAS, "A股")},
    ),
    ("demo", "有多少个进行中的项目", _Q.COUNT, "project", {("status", _O.EQUALS, "active")}),
    (
        "demo",
        "How many paused projects do we have?",
        _Q.COUNT,
        "project",
        {("status", _O.EQUALS, "paused")},
    ),
    ("demo", "有几个任务还没完成", _Q.COUNT, "task", {("status", _O.NOT_EQUALS, "done")}),
    (
        "demo",
        "Which projects are not paused?",
        _Q.LIST,
        "project",
        {("status", _O.NOT_EQUALS, "paused")},
    ),
    (
        "demo",
        "2026年创建了多少个项目",
        _Q.COUNT,
        "project",
        {("created_at", _O.GTE, Y2026[0]), ("created_at", _O.LT, Y2026[1])},
    ),
    (
        "demo",
        "How many projects were created in 2026?",
        _Q.COUNT,
        "project",
        {("created_at", _O.GTE, Y2026[0]), ("created_at", _O.LT, Y2026[1])},
    ),
    ("demo", "有多少个没有预算的项目", _Q.COUNT, "project", {("budget", _O.IS_NULL, True)}),
    (
        "demo",
        "How many projects have no budget?",
        _Q.COUNT,
        "project",
        {("budget", _O.IS_NULL, True)},
    ),
    ("demo", "预算超过 20 万的项目有哪些", _Q.LIST, "project", {("budget", _O.GT, 200000)}),
    ("demo", "预算超过二十万的项目有哪些", _Q.LIST, "project", {("budget", _O.GT, 200000)}),
    (
        "demo",
        "Which projects have a budget over 200k?",
        _Q.LIST,
        "project",
        {("budget", _O.GT, 200000)},
    ),
    (
        "demo",
        "How many projects have a budget of at least 1.5M?",
        _Q.COUNT,
        "project",
        {("budget", _O.GTE, 1500000)},
    ),
    (
        "demo",
        "预算在 10 万到 30 万之间的项目有几个",
        _Q.COUNT,
        "project",
        {("budget", _O.BETWEEN, (100000, 300000))},
    ),
    (
        "demo",
        "Which tasks are assigned to project 64?",
        _Q.LIST,
        "task",
        {("project_id", _O.EQUALS, "64")},
    ),
    ("demo", "项目 64 有哪些任务", _Q.LIST, "task", {("project_id", _O.EQUALS, "64")}),
    ("demo", "项目 64 现在什么状态", _Q.STATUS, "project", {("id", _O.EQUALS, "64")}),
    ("demo", "项目 64 和 65 有什么区别", _Q.COMPARE, "project", {("id", _O.IN, ("64", "65"))}),
    (
        "demo",
        "Compare project 64 with project 65",
        _Q.COMPARE,
        "project",
        {("id", _O.IN, ("64", "65"))},
    ),
    ("demo", "名字里带风控的项目有哪些", _Q.LIST, "project", {("title", _O.CONTAINS, "风控")}),
    (
        "demo",
        "Are there projects called alpha?",
        _Q.EXISTENCE,
        "project",
        {("title", _O.CONTAINS, "alpha")},
    ),
    (
        "demo",
        "当前系统架构是什么",
        _Q.EXPLAIN,
        "doc",
        {("topic", _O.EQUALS_OR_ALIAS, "architecture")},
    ),
    ("demo", "为什么刚才答错了", _Q.DIAGNOSE, "run", {("status", _O.EQUALS, "failed")}),
    (
        "tickets",
        "What is the priority of ticket TCK-7?",
        _Q.STATUS,
        "ticket",
        {("id", _O.EQUALS, "TCK-7")},
    ),
    ("tickets", "工单 TCK-7 的优先级是什么", _Q.STATUS, "ticket", {("id", _O.EQUALS, "TCK-7")}),
    (
        "tickets",
        "How many urgent tickets are there?",
        _Q.COUNT,
        "ticket",
        {("priority", _O.EQUALS, "urgent")},
    ),
    ("tickets", "有多少个紧急工单", _Q.COUNT, "ticket", {("priority", _O.EQUALS, "urgent")}),
    (
        "tickets",
        "除了已关闭的工单还有多少个",
        _Q.COUNT,
        "ticket",
        {("status", _O.NOT_EQUALS, "closed")},
    ),
    (
        "tickets",
        "Which tickets are not closed?",
        _Q.LIST,
        "ticket",
        {("status", _O.NOT_EQUALS, "closed")},
    ),
    (
        "tickets",
        "有没有退款超过 1000 元的工单",
        _Q.EXISTENCE,
        "ticket",
        {("refund_amount", _O.GT, 1000)},
    ),
    (
        "tickets",
        "Are there tickets with a refund over 1k?",
        _Q.EXISTENCE,
        "ticket",
        {("refund_amount", _O.GT, 1000)},
    ),
    (
        "tickets",
        "有多少个没有负责人的工单",
        _Q.COUNT,
        "ticket",
        {("assignee_id", _O.IS_NULL, True)},
    ),
    (
        "tickets",
        "Which tickets were opened in March 2026?",
        _Q.LIST,
        "ticket",
        {
            ("opened_at", _O.GTE, "2026-03-01T00:00:00+00:00"),
            ("opened_at", _O.LT, "2026-04-01T00:00:00+00:00"),
        },
    ),
    (
        "tickets",
        "今年提交的工单有哪些",
        _Q.LIST,
        "ticket",
        {("opened_at", _O.GTE, Y2026[0]), ("opened_at", _O.LT, Y2026[1])},
    ),
    (
        "tickets",
        "Compare TCK-7 and TCK-14",
        _Q.COMPARE,
        "ticket",
        {("id", _O.IN, ("TCK-7", "TCK-14"))},
    ),
    (
        "tickets",
        "有多少个账单相关的工单",
        _Q.COUNT,
        "ticket",
        {("product_area", _O.EQUALS_OR_ALIAS, "Billing")},
    ),
    (
        "tickets",
        "有没有主题包含退款的工单",
        _Q.EXISTENCE,
        "ticket",
        {("subject", _O.CONTAINS, "退款")},
    ),
    (
        "tickets",
        "Which tickets are assigned to AG-4?",
        _Q.LIST,
        "ticket",
        {("assignee_id", _O.EQUALS, "AG-4")},
    ),
    (
        "tickets",
        "How many agents were hired before 2022?",
        _Q.COUNT,
        "agent",
        {("hired_at", _O.LT, "2022-01-01")},
    ),
    ("tickets", "Which agents are in tier 2?", _Q.LIST, "agent", {("team", _O.EQUALS, "tier2")}),
]


@pytest.mark.parametrize(("cat", "question", "qt", "entity", "expected"), READINGS)
def test_every_condition_is_read(
    cat: str, question: str, qt: QueryType, entity: str, expected: set[Cond]
) -> None:
    r = read(question, CATALOGS[cat])
    assert r.problems == (), problems_text(r.problems, r.entity, r.language)
    assert (r.query_type, r.entity) == (qt, entity)
    assert conds(r) == expected


# (catalog, question, the words named as not applied)
RESIDUAL = [
    ("demo", "有没有日股项目", "日股"),
    ("demo", "Are there any US stock projects?", "US stock"),
    ("demo", "有多少个欧洲项目", "欧洲"),
    ("demo", "Which tasks are assigned to Li Wei?", "Li Wei"),
    ("demo", "What is the priority of project 64?", "priority"),
    ("demo", "有没有不是港股的项目", "港股"),  # market_theme cannot be excluded: never the positive
    ("tickets", "有多少个欧洲工单", "欧洲"),
    ("tickets", "Are there any gold tickets?", "gold"),
    ("tickets", "Which tickets did Northwind Traders submit?", "Northwind Traders submit"),
]


@pytest.mark.parametrize(("cat", "question", "words"), RESIDUAL)
def test_unknown_words_stay_residual_and_are_named(cat: str, question: str, words: str) -> None:
    r = read(question, CATALOGS[cat])
    assert not r.understood
    assert words in [p.text for p in r.problems]
    assert f"“{words}”" in problems_text(r.problems, r.entity, r.language)


def test_residual_feedback_names_the_fields_that_could_carry_it() -> None:
    zh = read("有多少个欧洲项目")
    text = problems_text(zh.problems, zh.entity, zh.language)
    assert text.startswith("“欧洲”未被应用：project没有字段或取值与之匹配")
    assert "market_theme (A股, 港股, 美股)" in text
    en = read("How many European projects are there?")
    text = problems_text(en.problems, en.entity, en.language)
    assert text.startswith("“European” is not applied: no field or value of project matches it")
    assert (
        "fields that could: status (active, paused, closed), market_theme (A股, 港股, 美股)" in text
    )


def test_every_piece_is_accounted_for() -> None:
    r = read("帮我看看系统里面有没有 A 股项目")
    kinds = [p.kind for p in r.pieces]
    assert Kind.RESIDUAL not in kinds
    assert {Kind.CUE, Kind.VALUE, Kind.ENTITY} <= set(kinds)


def test_sort_and_limit() -> None:
    r = read("Which project has the largest budget?")
    assert r.sort == (("budget", SortDirection.DESC),) and r.limit == 1
    r = read("列出最近的 3 个项目")
    assert r.sort == (("created_at", SortDirection.DESC),) and r.limit == 3
    r = read("Which ticket has the largest refund?", TICKETS)
    assert r.sort == (("refund_amount", SortDirection.DESC),) and r.limit == 1
    r = read("列出最新的 3 个工单", TICKETS)
    assert r.sort == (("opened_at", SortDirection.DESC),) and r.limit == 3


def test_rankings_read_as_sorted_lists() -> None:
    r = read("List the top 3 projects by budget")
    assert (r.query_type, r.sort, r.limit) == (QueryType.LIST, (("budget", SortDirection.DESC),), 3)
    r = read("预算最高的 3 个项目")  # no cue word: a ranking is a list
    assert (r.query_type, r.sort, r.limit) == (QueryType.LIST, (("budget", SortDirection.DESC),), 3)
    r = read("What is the newest project?")
    assert (r.query_type, r.limit) == (QueryType.LIST, 1)
    r = read("List the 2 tickets with the largest refunds", TICKETS)
    assert (r.sort, r.limit) == ((("refund_amount", SortDirection.DESC),), 2)
    assert not read("List the top 3 projects").understood  # top by what?


def test_label_text_after_and_before_the_field() -> None:
    r = read("Is there a project called Verifier hardening?")
    assert conds(r) == {("title", Operator.CONTAINS, "verifier hardening")}
    r = read("名字里带 A股 的项目有哪些")  # the name, not the market theme
    assert conds(r) == {("title", Operator.CONTAINS, "a股")}
    r = read("Which projects have research in the title?")
    assert conds(r) == {("title", Operator.CONTAINS, "research")}


def test_a_field_beside_its_value_is_part_of_the_condition() -> None:
    r = read("电话渠道的工单有多少个", TICKETS)
    assert r.understood and conds(r) == {("channel", Operator.EQUALS, "phone")}
    r = read("How many tickets have the status pending?", TICKETS)
    assert r.understood and conds(r) == {("status", Operator.EQUALS, "pending")}


def test_a_superlative_on_a_field_that_cannot_be_sorted_clarifies() -> None:
    r = read("Which agent has the largest team?", TICKETS)
    assert not r.understood


def test_attribute_questions_project_the_field() -> None:
    r = read("项目 64 的预算是多少")
    assert (r.query_type, r.projection) == (QueryType.STATUS, ("budget",))
    r = read("What is the priority of ticket TCK-7?", TICKETS)
    assert (r.query_type, r.projection) == (QueryType.STATUS, ("priority",))


def test_ids_follow_the_catalogs_pattern() -> None:
    assert read("Show me ticket tck-7", TICKETS).ids == ("TCK-7",)
    assert read("What is the status of run 12?").ids == ("12",)
    # a number that is no id of the shape stays a number, unplaced
    assert not read("What is the status of ticket 7?", TICKETS).understood


def test_pronouns_point_at_the_conversation() -> None:
    r = read("它现在什么状态", context_entities=("project",))
    assert (r.entity, r.pronoun, r.query_type) == ("project", True, QueryType.STATUS)
    assert read("这个项目现在什么状态").pronoun
    assert not read("有多少个项目").pronoun


def test_linked_values_match_and_two_fields_are_ambiguous() -> None:
    one = {"li wei": (LinkedValue("task", "assignee", "Li Wei"),)}
    r = read("Which tasks are assigned to Li Wei?", values=one)
    assert r.understood and conds(r) == {("assignee", Operator.EQUALS, "Li Wei")}
    two = {
        "northwind traders": (
            LinkedValue("ticket", "requester", "Northwind Traders"),
            LinkedValue("ticket", "subject", "Northwind Traders"),
        )
    }
    r = read("How many tickets are from Northwind Traders?", TICKETS, values=two)
    assert not r.understood
    text = problems_text(r.problems, r.entity, r.language)
    assert "requester" in text and "subject" in text


def test_another_tenants_values_are_never_read() -> None:
    # The reader sees only the mapping it is given: the asking tenant's.
    assert not read("Which tasks are assigned to Li Wei?", values={}).understood


def test_explain_topics_are_searched_as_text() -> None:
    r = read("What is quantum computing?")
    assert (r.query_type, r.entity) == (QueryType.EXPLAIN, "doc")
    assert r.text_terms == ("quantum computing",)
    assert conds(r) == {("topic", Operator.CONTAINS, "quantum computing")}


DATES = [
    ("2026年", "2026-01-01", "2027-01-01"),
    ("今年", "2026-01-01", "2027-01-01"),
    ("去年", "2025-01-01", "2026-01-01"),
    ("上个月", "2026-10-01", "2026-11-01"),
    ("last month", "2026-10-01", "2026-11-01"),
    ("最近 7 天", "2026-10-25T12:00:00", "2026-11-01T12:00:00"),
    ("最近七天", "2026-10-25T12:00:00", "2026-11-01T12:00:00"),
    ("in the last 30 days", "2026-10-02T12:00:00", "2026-11-01T12:00:00"),
    ("since 2020", "2020-01-01", None),
    ("2020年以来", "2020-01-01", None),
    ("before 2021-03-01", None, "2021-03-01"),
    ("2021年3月1日之前", None, "2021-03-01"),
    ("after 2024", "2025-01-01", None),
    ("in March 2026", "2026-03-01", "2026-04-01"),
    ("2026年10月", "2026-10-01", "2026-11-01"),
]


@pytest.mark.parametrize(("text", "since", "until"), DATES)
def test_dates_read_as_ranges_at_their_granularity(
    text: str, since: str | None, until: str | None
) -> None:
    (found,) = find_dates(normalize_text(text), NOW)
    assert found.end - found.start == len(normalize_text(text))

    def iso(d: datetime | None) -> str | None:
        if d is None:
            return None
        return d.date().isoformat() if d.hour == 0 and d.minute == 0 else d.isoformat()[:19]

    assert (iso(found.since), iso(found.until)) == (since, until)


NUMBERS = [
    ("20万", 200000.0),
    ("二十万", 200000.0),
    ("200k", 200000.0),
    ("1.5M", 1500000.0),
    ("2 million", 2000000.0),
    ("3亿", 300000000.0),
    ("$3,000", 3000.0),
    ("1000 元", 1000.0),
    ("百分之五", 5.0),
]


@pytest.mark.parametrize(("text", "value"), NUMBERS)
def test_numbers_with_units(text: str, value: float) -> None:
    (n,) = find_numbers(normalize_text(text))
    assert n.value == value


def test_ids_are_not_numbers() -> None:
    assert find_numbers(normalize_text("TCK-7 INV-2024-001")) == []


def _mini(**entity: object) -> dict[str, object]:
    base: dict[str, object] = {"table": "t", "label": "name", "text_search": []}
    return {"entities": {"thing": {**base, **entity}}}


def test_text_fallback_needs_text_search_columns() -> None:
    with pytest.raises(CatalogError) as info:
        catalog_from_mapping(_mini(text_fallback=True))
    assert "text_fallback" in info.value.message
    ok = catalog_from_mapping(_mini(text_fallback=True, text_search=["name"]))
    assert ok.entities["thing"].text_fallback


def test_text_fallback_turns_unknown_words_into_a_text_condition() -> None:
    raw = _mini(
        text_fallback=True,
        text_search=["name"],
        synonyms=["thing", "things"],
        query_types=["count"],
    )
    cat = catalog_from_mapping(raw)
    r = read_question("How many gold things are there?", cat, now=NOW)
    assert r.understood
    assert {(c.field, c.operator, c.value, c.textual) for c in r.conditions} == {
        ("name", Operator.CONTAINS, "gold", True)
    }
