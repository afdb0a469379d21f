"""question_covered accepts every spelling of the question's condition and no other.

A range is compared as the interval the plan's filters on the field allow
together (verifier/checks/ranges.py): on a DATE field `between "2025-01-01" and
"2025-12-31"` is the year 2025, like `>= "2025-01-01" and < "2026-01-01"`; on a
datetime field it ends at the first instant of 31 December and is not. `in` with
one value is `=`. A wider or narrower range, a dropped or inverted yes/no
condition, still fails. With no question the check does not run, and the verdict
says so (`skipped`), never listing it as passed.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog, demo_catalog, load_catalog
from qdsl.dsl.ir import Operator
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.question import Reading, read_question
from qdsl.executor.result import ExecutionResult
from qdsl.verifier import Answer, Subject, VerifyContext, verify
from qdsl.verifier.checks.question import question_covered
from qdsl.verifier.checks.ranges import interval

NOW = datetime(2026, 11, 4, 15, 30, tzinfo=UTC)
DEPLOYMENTS = Path(__file__).parents[1] / "deployments"
CATALOGS = {
    "staff": load_catalog(DEPLOYMENTS / "staff" / "catalog.toml"),
    "tickets": load_catalog(DEPLOYMENTS / "tickets" / "catalog.toml"),
    "demo": demo_catalog(),
}


def _result(plan_entity: str, query_type: object) -> ExecutionResult:
    return ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=query_type,  # type: ignore[arg-type]
        entity_type=plan_entity,
        template="t",
        plan_hash="h",
    )


def judge(cat: str, question: str, plan_text: str) -> list[str]:
    catalog: Catalog = CATALOGS[cat]
    reading: Reading = read_question(question, catalog, now=NOW)
    plan = normalize(load_plan(plan_text), catalog, PlanContext(tenant_id="t1")).plan
    answer = Answer(contract=plan.answer_contract or "clarify_or_fail", text="")  # type: ignore[arg-type]
    ctx = VerifyContext(tenant_id="t1", catalog=catalog, question=reading)
    subject = Subject(
        plan=plan, result=_result(plan.entity_type, plan.query_type), answer=answer, context=ctx
    )
    return [i.message for i in question_covered(subject)]


LAST_YEAR_DAYS = "去年入职的员工有哪些"
LAST_YEAR_INSTANTS = "How many projects were created last year?"

# (catalog, question, plans that state its condition, plans that do not)
FORMS: list[tuple[str, str, list[str], list[str]]] = [
    (
        "staff",
        LAST_YEAR_DAYS,  # hired_on is a DATE field: whole days
        [
            'list employee where hired_on between "2025-01-01" and "2025-12-31"',
            'list employee where hired_on >= "2025-01-01" and hired_on < "2026-01-01"',
            'list employee where hired_on >= "2025-01-01" and hired_on <= "2025-12-31"',
            'list employee where hired_on > "2024-12-31" and hired_on < "2026-01-01"',
        ],
        [
            "list employee",
            'list employee where hired_on >= "2025-01-01"',
            'list employee where hired_on between "2025-01-01" and "2026-01-01"',
            'list employee where hired_on between "2025-01-02" and "2025-12-31"',
            'list employee where hired_on between "2024-01-01" and "2025-12-31"',
            'list employee where hired_on >= "2025-01-01" and hired_on < "2025-12-31"',
        ],
    ),
    (
        "demo",
        LAST_YEAR_INSTANTS,  # created_at is a datetime field: instants
        [
            'count project where created_at >= "2025-01-01T00:00:00+00:00" '
            'and created_at < "2026-01-01T00:00:00+00:00"',
            'count project where created_at >= "2025-01-01" and created_at < "2026-01-01"',
            'count project where created_at between "2025-01-01T00:00:00+00:00" '
            'and "2025-12-31T23:59:59.999999+00:00"',
        ],
        [
            # ends at the first instant of 31 December: the last day is left out
            'count project where created_at between "2025-01-01" and "2025-12-31"',
            # one second short of the year
            'count project where created_at between "2025-01-01" and "2025-12-31T23:59:59"',
            # one instant more than the year
            'count project where created_at >= "2025-01-01" and created_at <= "2026-01-01"',
        ],
    ),
    (
        "tickets",
        "How many agents were hired in 2023?",  # agent.hired_at: DATE
        ['count agent where hired_at between "2023-01-01" and "2023-12-31"'],
        ['count agent where hired_at between "2023-01-01" and "2024-01-01"'],
    ),
    (
        "tickets",
        "Which tickets were opened in March 2026?",  # ticket.opened_at: datetime
        [
            'list ticket where opened_at between "2026-03-01" and "2026-03-31T23:59:59.999999"',
            'list ticket where opened_at >= "2026-03-01" and opened_at < "2026-04-01"',
        ],
        ['list ticket where opened_at between "2026-03-01" and "2026-03-31"'],
    ),
    (
        "demo",
        "预算在 10 万到 30 万之间的项目有几个",  # a number: bounds as written
        [
            "count project where budget between 100000 and 300000",
            "count project where budget >= 100000 and budget <= 300000",
            "count project where budget between 100000.0 and 300000.0",
        ],
        [
            "count project where budget > 100000 and budget <= 300000",
            "count project where budget >= 100000 and budget < 300000",
            "count project where budget between 100000 and 300001",
        ],
    ),
    (
        "demo",
        "有多少个进行中的项目",
        ['count project where status in ("active")'],
        ['count project where status in ("active", "paused")'],
    ),
    (
        "demo",
        "有几个任务还没完成",
        ['count task where status not in ("done")'],
        ['count task where status not in ("done", "blocked")'],
    ),
    (
        "demo",
        "项目 64 现在什么状态",
        ['status project where id in ("64")'],
        ['status project where id in ("64", "65")'],
    ),
    (
        "staff",
        "How many employees are not remote?",
        ["count employee where remote = false"],
        [
            "count employee",
            "count employee where remote = true",
            # also the employees with no remote flag at all: wider
            "count employee where remote != true",
        ],
    ),
    (
        "staff",
        "在上海远程办公的高级员工有哪些",  # the row: remote was dropped and passed
        ['list employee where city = "shanghai" and level = "senior" and remote = true'],
        [
            'list employee where city = "shanghai" and level = "senior"',
            'list employee where city = "shanghai" and level = "senior" and remote = false',
        ],
    ),
]

CASES = [
    pytest.param(cat, q, plan, ok, id=f"{'ok' if ok else 'refused'}: {plan}")
    for cat, q, good, bad in FORMS
    for plans, ok in ((good, True), (bad, False))
    for plan in plans
]


@pytest.mark.parametrize(("cat", "question", "plan_text", "ok"), CASES)
def test_equivalent_forms_pass_and_others_fail(
    cat: str, question: str, plan_text: str, ok: bool
) -> None:
    found = judge(cat, question, plan_text)
    assert (found == []) is ok, found


def test_a_range_not_as_asked_says_both_ranges() -> None:
    plan = 'count project where created_at between "2025-01-01" and "2025-12-31"'
    (message,) = judge("demo", LAST_YEAR_INSTANTS, plan)
    assert message.startswith("“last year” is not applied as asked: the question means created_at")
    assert "[2025-01-01T00:00:00+00:00, 2026-01-01T00:00:00+00:00)" in message
    (zh,) = judge("staff", LAST_YEAR_DAYS, 'list employee where hired_on >= "2025-01-01"')
    assert zh.startswith("“去年”未被计划按原意应用：问题要求 hired_on 在 [2025-01-01, 2026-01-01)")


def test_without_a_question_the_check_does_not_run() -> None:
    catalog = CATALOGS["demo"]
    plan = normalize(load_plan("count project"), catalog, PlanContext(tenant_id="t1")).plan
    result = _result("project", plan.query_type).model_copy(update={"count": 3})
    answer = Answer(contract=plan.answer_contract, text="There are 3 projects.", data={"count": 3})  # type: ignore[arg-type]
    verdict = verify(plan, result, answer, context=VerifyContext(tenant_id="t1", catalog=catalog))
    assert "question_covered" not in verdict.passed
    assert "question_covered" not in verdict.checks_run
    assert verdict.skipped == ("question_covered",)
    # ... and with one, it runs
    reading = read_question("现在有多少个项目", catalog, now=NOW)
    ctx = VerifyContext(tenant_id="t1", catalog=catalog, question=reading)
    verdict = verify(plan, result, answer, context=ctx)
    assert "question_covered" in verdict.passed and verdict.skipped == ()


_DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31))


@given(_DAYS, st.integers(min_value=0, max_value=4000))
def test_on_days_between_is_the_half_open_range_of_its_days(first: date, span: int) -> None:
    spec = CATALOGS["staff"].entities["employee"].fields["hired_on"]
    last = first + timedelta(days=span)
    day = timedelta(days=1)

    def of(*filters: tuple[Operator, str | tuple[str, str]]) -> object:
        return interval(spec, list(filters))

    a, b, after = first.isoformat(), last.isoformat(), (last + day).isoformat()
    same = of((Operator.BETWEEN, (a, b)))
    assert same == of((Operator.GTE, a), (Operator.LT, after))
    assert same == of((Operator.GT, (first - day).isoformat()), (Operator.LTE, b))
    assert same != of((Operator.BETWEEN, (a, after)))
    assert same != of((Operator.GTE, a), (Operator.LT, b))


@given(_DAYS, st.integers(min_value=0, max_value=4000))
def test_on_instants_between_days_leaves_out_the_last_day(first: date, span: int) -> None:
    spec = CATALOGS["demo"].entities["project"].fields["created_at"]
    start = datetime(first.year, first.month, first.day, tzinfo=UTC)
    end = start + timedelta(days=span + 1)  # the first instant after the last day
    half_open = interval(spec, [(Operator.GTE, start.isoformat()), (Operator.LT, end.isoformat())])
    last_day = (end - timedelta(days=1)).date().isoformat()
    assert interval(spec, [(Operator.BETWEEN, (start.isoformat(), last_day))]) != half_open
    last_instant = (end - timedelta(microseconds=1)).isoformat()
    assert interval(spec, [(Operator.BETWEEN, (start.isoformat(), last_instant))]) == half_open
