"""A superlative whose top value several rows hold names each of them (issue 23,
item 7): "who has the highest salary" when two earn the most never picks one.

On the staff deployment (tests/deployments/staff), built as a deployer builds
it and then given a tie: acme's E-1 is raised to E-7's salary, the highest.
globex keeps one top earner. The clinic deployment's DATE tie is asked through
the CLI by tests/docs/test_deploying_clinic.py (a second catalog, both dialects).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from deployments.small import STAFF, build, catalog_of
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, AnswerResult, plan_and_answer
from qdsl.facts.db import make_engine
from qdsl.planner import LLMPlanner
from qdsl.superlatives import TIE_ROWS

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def tied_staff(dialect: str, request: pytest.FixtureRequest) -> Iterator[Engine]:
    if dialect == "sqlite":
        tmp = request.getfixturevalue("tmp_path")
        url = f"sqlite+pysqlite:///{tmp / 'staff.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    build(STAFF, url)
    engine = make_engine(url)
    with engine.begin() as conn:
        top = conn.execute(
            sa.text("SELECT max(salary) FROM employees WHERE tenant_id = 'acme'")
        ).scalar_one()
        conn.execute(
            sa.text("UPDATE employees SET salary = :s WHERE tenant_id = 'acme' AND id = 'E-1'"),
            {"s": top},
        )
    yield engine
    engine.dispose()


def _ask(
    engine: Engine, question: str, tenant: str = "acme", plan: str | None = None
) -> AnswerResult:
    planner = LLMPlanner(lambda _prompt: str(plan)) if plan is not None else None
    options = AnswerOptions(now=NOW, catalog=catalog_of(STAFF), planner=planner)
    return plan_and_answer(question, tenant, engine=engine, options=options)


def _top(engine: Engine, tenant: str) -> set[str]:
    """The oracle: every employee holding the tenant's highest salary."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT id FROM employees WHERE tenant_id = :t AND salary = "
                "(SELECT max(salary) FROM employees WHERE tenant_id = :t)"
            ),
            {"t": tenant},
        ).all()
    return {str(r[0]) for r in rows}


def test_both_top_earners_are_named(tied_staff: Engine) -> None:
    res = _ask(tied_staff, "Who has the highest salary?")
    assert res.status == "answered", res.text
    assert {i["id"] for i in res.data["items"]} == _top(tied_staff, "acme") == {"E-1", "E-7"}
    assert res.text == (
        "Alice Wang (#E-1) and Gao Yan (#E-7) share the highest salary (47000) of the 9 employees."
    )
    assert res.data["total"] == 9 and res.data["truncated"] is True
    assert res.plan is not None and res.plan.limit == 2  # the plan states what was answered


def test_both_are_named_in_chinese_as_a_tie(tied_staff: Engine) -> None:
    res = _ask(tied_staff, "谁的薪资最高")
    assert res.status == "answered", res.text
    assert res.text == (
        "共 9 个员工，薪资最高的是 Alice Wang (#E-1)、Gao Yan (#E-7)（并列，47000）。"
    )


def test_one_top_earner_is_answered_as_before(tied_staff: Engine) -> None:
    res = _ask(tied_staff, "Who has the highest salary?", tenant="globex")
    assert res.status == "answered", res.text
    assert [i["id"] for i in res.data["items"]] == sorted(_top(tied_staff, "globex")) == ["E-1"]
    assert res.text.startswith("Hana Sato (#E-1) has the highest salary (50000)")
    assert res.plan is not None and res.plan.limit == 1
    # the other end is not tied in acme either
    low = _ask(tied_staff, "Who has the lowest salary?")
    assert [i["id"] for i in low.data["items"]] == ["E-9"] and low.plan is not None
    assert low.plan.limit == 1


def test_a_plan_of_two_rows_that_do_not_tie_is_not_the_top_one(tied_staff: Engine) -> None:
    # the verifier accepts a limit above the question's one only for rows that tie
    plan = "list employee\nselect id, name, salary\norder by salary desc\nlimit 2"
    res = _ask(tied_staff, "Who has the highest salary?", tenant="globex", plan=plan)
    assert res.status != "answered", res.text
    tied = _ask(tied_staff, "Who has the highest salary?", plan=plan)
    assert tied.status == "answered", tied.text
    assert "share the highest salary" in tied.text


def test_more_ties_than_are_read_say_there_are_more(tied_staff: Engine) -> None:
    with tied_staff.begin() as conn:
        for n in range(100, 100 + TIE_ROWS + 2):
            conn.execute(
                sa.text(
                    "INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on,"
                    " salary) VALUES ('acme', :id, :name, 'beijing', 'junior', FALSE,"
                    " '2024-01-01', 47000)"
                ),
                {"id": f"E-{n}", "name": f"Tie {n}"},
            )
    res = _ask(tied_staff, "Who has the highest salary?")
    assert res.status == "answered", res.text
    assert len(res.data["items"]) == TIE_ROWS
    assert " and more share the highest salary (47000) of the 21 employees" in res.text
