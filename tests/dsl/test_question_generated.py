"""Readings the generated-deployment property found wrong (tests/generated/found.toml).

Each was answered, with `question_covered` passing, by a plan beside the
question: a second date condition bound to the first date field, and "最多 N"
(at most N) read as "= N" with a sort. Two more clarified where the question
is plain: conditions joined by 且 / 并且, and an id written against the Chinese
noun before it ("工单TCK-7的状态如何").
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.ir import Operator
from qdsl.dsl.question import read_question

NOW = datetime(2026, 6, 15, 10, 30, tzinfo=UTC)
Y2025 = ("2025-01-01", "2026-01-01")
Y2026 = ("2026-01-01T00:00:00+00:00", "2027-01-01T00:00:00+00:00")


def _catalog() -> Catalog:
    return catalog_from_mapping(
        {
            "entities": {
                "employee": {
                    "table": "employees",
                    "label": "name",
                    "query_types": ["existence", "count", "list", "status", "compare"],
                    "synonyms": ["员工", "employee", "employees"],
                    "sorts": ["salary", "hired_on", "created_at"],
                    "fields": {
                        "hired_on": {
                            "column": "hired_on",
                            "type": "date",
                            "operators": ["gt", "gte", "lt", "lte", "between", "is_null"],
                            "synonyms": ["入职日期", "hired", "hire date"],
                        },
                        "created_at": {
                            "column": "created_at",
                            "type": "datetime",
                            "operators": ["gt", "gte", "lt", "lte", "between", "is_null"],
                            "synonyms": ["创建时间", "created", "creation time"],
                        },
                        "salary": {
                            "column": "salary",
                            "type": "number",
                            "operators": ["equals", "gt", "gte", "lt", "lte", "between"],
                            "synonyms": ["薪资", "salary"],
                        },
                    },
                }
            }
        }
    )


CATALOG = _catalog()


def _conds(question: str) -> set[tuple[str, Operator, object]]:
    r = read_question(question, CATALOG, now=NOW)
    assert not r.problems, r.problems
    return {(c.field, c.operator, c.value) for c in r.conditions}


def _years(field: str, span: tuple[str, str]) -> set[tuple[str, Operator, object]]:
    return {(field, Operator.GTE, span[0]), (field, Operator.LT, span[1])}


@pytest.mark.parametrize(
    "question",
    [
        "2025年入职、2026年创建的员工有几个",
        "2026年创建的2025年入职的员工有几个",
        "入职日期在2025年、创建时间在2026年的员工有几个",
        "创建时间在2026年、入职日期在2025年的员工有几个",
        "2025年入职且2026年创建的员工有几个",
        "入职日期在2025年并且创建时间在2026年的员工有几个",
        "How many employees hired in 2025 and created in 2026 are there?",
        "How many employees created in 2026 and hired in 2025 are there?",
    ],
)
def test_each_date_binds_to_the_field_beside_it(question: str) -> None:
    assert _conds(question) == _years("hired_on", Y2025) | _years("created_at", Y2026)


def test_one_date_field_still_takes_a_since_and_a_before() -> None:
    assert _conds("入职日期在2025年以来、2026年之前的员工有几个") == {
        ("hired_on", Operator.GTE, "2025-01-01"),
        ("hired_on", Operator.LT, "2026-01-01"),
    }


@pytest.mark.parametrize(
    ("question", "op", "n"),
    [
        ("薪资最多45000的员工有几个", Operator.LTE, 45000),
        ("薪资最高4.5万的员工有几个", Operator.LTE, 45000),
        ("薪资最少5000元的员工有几个", Operator.GTE, 5000),
        ("薪资最低5000的员工有几个", Operator.GTE, 5000),
    ],
)
def test_a_superlative_before_a_number_is_a_bound(question: str, op: Operator, n: int) -> None:
    r = read_question(question, CATALOG, now=NOW)
    assert not r.problems
    assert {(c.field, c.operator, c.value) for c in r.conditions} == {("salary", op, n)}
    assert not r.sort


def test_a_superlative_alone_still_ranks() -> None:
    r = read_question("薪资最高的员工有哪些", CATALOG, now=NOW)
    assert not r.conditions
    assert [(s[0], s[1].value) for s in r.sort] == [("salary", "desc")]


def _tickets() -> Catalog:
    from pathlib import Path

    from qdsl.dsl.catalog import load_catalog

    return load_catalog(Path(__file__).parents[1] / "deployments" / "tickets" / "catalog.toml")


@pytest.mark.parametrize(
    "question", ["工单TCK-7现在什么状态", "工单TCK-7的状态如何", "比较工单TCK-7和TCK-8"]
)
def test_an_id_with_letters_may_touch_chinese_text(question: str) -> None:
    r = read_question(question, _tickets(), now=NOW)
    assert not r.problems, r.problems
    assert r.entity == "ticket"
    assert "TCK-7" in [
        str(v)
        for c in r.conditions
        for v in (c.value if isinstance(c.value, tuple) else (c.value,))
    ]


@pytest.mark.parametrize("question", ["有多少个工单", "2026年提交的工单有多少个"])
def test_a_number_inside_chinese_text_is_no_id(question: str) -> None:
    catalog = catalog_from_mapping(
        {
            "entities": {
                "ticket": {
                    "table": "tickets",
                    "label": "subject",
                    "id_pattern": "\\d{4}",
                    "query_types": ["count", "list"],
                    "synonyms": ["工单"],
                    "fields": {
                        "opened_at": {
                            "column": "opened_at",
                            "type": "datetime",
                            "operators": ["gte", "lt"],
                            "synonyms": ["提交时间"],
                        }
                    },
                }
            }
        }
    )
    r = read_question(question, catalog, now=NOW)
    assert not r.problems
    assert all(c.field != "id" for c in r.conditions)


@pytest.mark.parametrize("question", ["有没有没有退款的工单", "是否有没有退款的工单"])
def test_absence_after_an_existence_cue(question: str) -> None:
    r = read_question(question, _tickets(), now=NOW)
    assert not r.problems, r.problems
    assert {(c.field, c.operator, c.value) for c in r.conditions} == {
        ("refund_amount", Operator.IS_NULL, True)
    }


def test_a_date_binds_past_an_absence_of_another_date_field() -> None:
    # "没有创建时间、2025年入职的": created_at is missing, hired_on is in 2025
    assert _conds("有没有没有创建时间、2025年入职的员工") == {
        ("created_at", Operator.IS_NULL, True),
        *_years("hired_on", Y2025),
    }


@pytest.mark.parametrize(
    "question",
    [
        "How many tickets not opened in 2026 and not urgent are there?",
        "有多少个不是2026年提交、不是紧急的工单",
    ],
)
def test_a_negation_with_nothing_to_negate_is_not_lost_to_the_next(question: str) -> None:
    # the date cannot be negated; the answer must not apply it as stated
    r = read_question(question, _tickets(), now=NOW)
    assert [p.text for p in r.problems] in (["not"], ["不是"])


@pytest.mark.parametrize(
    "question",
    [
        "有没有不是2026年提交且紧急的工单",
        "Are there any tickets not opened in 2026 that are urgent?",
        "有没有不是没有退款且紧急的工单",
    ],
)
def test_a_negation_before_a_period_never_moves_to_the_next_value(question: str) -> None:
    # found: "不是2026年以来创建且Go的" was read as created since 2026 and skill not Go
    r = read_question(question, _tickets(), now=NOW)
    assert [p.text for p in r.problems] in (["not"], ["不是"])
    urgent = [c for c in r.conditions if c.field == "priority"]
    assert [c.operator for c in urgent] in ([Operator.EQUALS], [Operator.EQUALS_OR_ALIAS])
