"""An attribute of an object named by its label (issue 23): "What is Alice Wang's
salary?" is answered with that employee's salary, citing the row; a name two
objects bear asks which one; a name only another tenant's objects bear finds
nothing. On two hand-written deployments (staff, shop) and both dialects; the
generated-deployment property asks such questions too (tests/generated,
`by:label`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_CATALOG
from deployments.small import STAFF, build, catalog_of
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, AnswerResult, plan_and_answer
from qdsl.dsl.catalog import load_catalog
from qdsl.facts.db import make_engine
from qdsl.planner import LLMPlanner

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def staff(dialect: str, request: pytest.FixtureRequest) -> Iterator[Engine]:
    if dialect == "sqlite":
        url = f"sqlite+pysqlite:///{request.getfixturevalue('tmp_path') / 'staff.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    build(STAFF, url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def _ask(
    engine: Engine, question: str, tenant: str = "acme", plan: str | None = None
) -> AnswerResult:
    planner = LLMPlanner(lambda _prompt: str(plan)) if plan is not None else None
    options = AnswerOptions(now=NOW, catalog=catalog_of(STAFF), planner=planner)
    return plan_and_answer(question, tenant, engine=engine, options=options)


def _salary(engine: Engine, tenant: str, name: str) -> list[tuple[str, float]]:
    """The oracle: (id, salary) of every employee of the tenant bearing the name."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT id, salary FROM employees WHERE tenant_id = :t AND name = :n"),
            {"t": tenant, "n": name},
        ).all()
    return [(str(i), float(s)) for i, s in rows]


@pytest.mark.parametrize(
    "question",
    [
        "What is Alice Wang's salary?",
        "What is the salary of Alice Wang?",
        "Alice Wang的薪资是多少",
        "alice wang 的薪资是什么",
    ],
)
def test_an_attribute_of_an_object_named_by_its_label(staff: Engine, question: str) -> None:
    ((ident, salary),) = _salary(staff, "acme", "Alice Wang")
    res = _ask(staff, question)
    assert res.status == "answered", res.text
    assert res.answer_contract is not None and res.answer_contract.value == "entity_snapshot"
    assert res.data["entity"]["id"] == ident and res.data["entity"]["salary"] == salary
    assert [e.entity_id for e in res.evidence] == [ident]
    # the asked field leads the answer, the label is not repeated as a condition
    head = res.text.split("。")[0] if "薪资" in question else res.text.split(".")[0]
    assert f"{salary:.0f}" in head.split(";")[0].split("；")[0], res.text
    assert "alice wang" not in res.text


def test_a_possessive_after_an_id_is_the_id(staff: Engine) -> None:
    res = _ask(staff, "What is E-2's level?")
    assert res.status == "answered", res.text
    assert res.data["entity"]["id"] == "E-2"


def test_a_name_two_objects_bear_asks_which_one(staff: Engine) -> None:
    with staff.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, "
                "salary) VALUES ('acme', 'E-30', 'Alice Wang', 'beijing', 'junior', FALSE, "
                "'2024-03-04', 12000)"
            )
        )
    assert len(_salary(staff, "acme", "Alice Wang")) == 2
    for question in ("What is Alice Wang's salary?", "Alice Wang的薪资是多少"):
        res = _ask(staff, question)
        assert res.status == "clarify", res.text
        assert "E-1" in res.text and "E-30" in res.text
        assert "42000" not in res.text and "12000" not in res.text
        assert not res.evidence


def test_a_careless_plan_naming_a_shared_value_asks_which_one(staff: Engine) -> None:
    """An LLM's snapshot plan that names its object by a value several share is
    never answered with the first row found."""
    plan = 'status employee where city = "beijing" select salary'
    res = _ask(staff, "What is the salary of the employee in Beijing?", plan=plan)
    assert res.status == "clarify", res.text
    assert res.data is None or "entity" not in (res.data or {})


def test_a_name_of_another_tenant_finds_nothing(staff: Engine) -> None:
    assert _salary(staff, "globex", "Alice Wang") == []
    res = _ask(staff, "What is Alice Wang's salary?", tenant="globex")
    assert res.status != "answered" or not res.data.get("entity"), res.text
    assert "42000" not in res.text and "E-1" not in res.text


@pytest.mark.parametrize(
    ("tenant", "question", "name"),
    [
        ("nordwind", "What is the price of Garden Hose?", "Garden Hose"),
        ("nordwind", "Garden Hose的价格是多少", "Garden Hose"),
        ("sunrise", "What is Li Na's tier?", "Li Na"),
    ],
)
def test_a_second_catalog_names_its_objects_by_label(
    shop_url: str, tenant: str, question: str, name: str
) -> None:
    engine = make_engine(shop_url)
    try:
        entity = "product" if "price" in question or "价格" in question else "customer"
        table = {"product": "products", "customer": "customers"}[entity]
        with engine.connect() as conn:
            (ident,) = conn.execute(
                sa.text(f"SELECT id FROM {table} WHERE tenant_id = :t AND name = :n"),
                {"t": tenant, "n": name},
            ).scalars()
        options = AnswerOptions(now=NOW, catalog=load_catalog(SHOP_CATALOG))
        res = plan_and_answer(question, tenant, engine=engine, options=options)
    finally:
        engine.dispose()
    assert res.status == "answered", res.text
    assert str(res.data["entity"]["id"]) == str(ident)
