"""A fact predicate holding several values for one object: every value travels.

Issue 20, on an HR deployment (tests/hr_facts/hr/): "员工 E-4 现在什么状态"
answered "技能：Kubernetes" although E-4 also has Go and the evidence cited
both facts, and "Compare employees E-1 and E-13" missed the skill difference
(PostgreSQL vs Machine Learning) because only the first value of each was
compared. Snapshots, lists projecting a fact field and compares carry every
value, distinct by meaning (aliases are one value), in a stable order, cut at
`FACT_VALUES_CAP` with the number held; compares report differences of sets.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor import compile as compile_module
from qdsl.executor.compile import FACT_VALUES_CAP
from qdsl.executor.run import execute
from qdsl.facts.db import make_engine
from qdsl.render import render
from qdsl.verifier import VerifyContext, verify

TENANT = "acme"


def _ask(question: str, engine: Engine, catalog: Catalog) -> Any:
    return plan_and_answer(question, TENANT, engine=engine, options=AnswerOptions(catalog=catalog))


def _run(plan: str, engine: Engine, catalog: Catalog, tenant: str = TENANT) -> Any:
    bound = compile_source(plan, catalog, PlanContext(tenant_id=tenant)).bound
    assert bound is not None
    return execute(bound, catalog, engine, tenant)


def _fact_ids(result: Any, entity_id: str) -> set[str]:
    return {
        e.id
        for e in result.evidence
        if e.kind == "fact" and e.entity_id == entity_id and e.predicate == "skill"
    }


def test_a_snapshot_states_every_value_of_a_fact(hr_engine: Engine, hr_catalog: Catalog) -> None:
    res = _ask("员工 E-4 现在什么状态", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    entity = res.data["entity"]
    assert entity["id"] == "E-4"
    # Go is stated twice (by two sources): one value, both facts cited
    assert entity["facts"]["skill"] == ["Go", "Kubernetes"]
    assert "Go" in res.text and "Kubernetes" in res.text
    cited = {e.id for e in res.evidence if e.kind == "fact"}
    assert len(cited) == 3


def test_the_english_snapshot_too(hr_engine: Engine, hr_catalog: Catalog) -> None:
    res = _ask("What is the status of employee E-4?", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    assert "Go" in res.text and "Kubernetes" in res.text
    assert res.data["entity"]["facts"]["skill"] == ["Go", "Kubernetes"]


def test_aliases_of_one_value_are_one_value(hr_engine: Engine, hr_catalog: Catalog) -> None:
    result = _run('status employee where id = "E-13"', hr_engine, hr_catalog)
    (row,) = result.rows
    # "ML" and "Machine Learning" are spellings of one canonical value
    assert row.facts["skill"] == ("Go", "Machine Learning")
    assert row.facts_cut == {}
    # every fact behind the values is evidence of the row
    assert _fact_ids(result, "E-13") <= set(row.evidence_ids)
    assert len(_fact_ids(result, "E-13")) == 3


def test_a_compare_reports_the_difference_of_the_sets(
    hr_engine: Engine, hr_catalog: Catalog
) -> None:
    res = _ask("Compare employees E-1 and E-13", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    by_field = {d["field"]: d for d in res.data["differences"]}
    skill = by_field["skill"]
    assert skill["values"] == {"E-1": ["Go", "PostgreSQL"], "E-13": ["Go", "Machine Learning"]}
    assert skill["common"] == ["Go"]
    assert skill["only"] == {"E-1": ["PostgreSQL"], "E-13": ["Machine Learning"]}
    assert "PostgreSQL" in res.text and "Machine Learning" in res.text


def test_a_chinese_compare_too(hr_engine: Engine, hr_catalog: Catalog) -> None:
    res = _ask("员工 E-1 和 E-13 有什么区别", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    fields = {d["field"] for d in res.data["differences"]}
    assert "skill" in fields
    assert "PostgreSQL" in res.text and "Machine Learning" in res.text


def test_equal_sets_are_no_difference(hr_engine: Engine, hr_catalog: Catalog) -> None:
    # the same skills in another order of facts, stated by other sources
    res = _ask("Compare employees E-1 and E-4", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    skill = {d["field"]: d for d in res.data["differences"]}["skill"]
    assert skill["only"] == {"E-1": ["PostgreSQL"], "E-4": ["Kubernetes"]}
    level = {d["field"] for d in res.data["differences"]}
    assert "city" in level  # Shanghai vs Beijing: a column difference stays one


def test_many_values_are_cut_at_the_bound_with_their_count(
    hr_engine: Engine, hr_catalog: Catalog
) -> None:
    result = _run('status employee where id = "E-7"', hr_engine, hr_catalog)
    (row,) = result.rows
    assert len(row.facts["skill"]) == FACT_VALUES_CAP
    assert row.facts["skill"][:2] == ("Skill 01", "Skill 02")  # a stable order
    assert row.facts_cut == {"skill": 25}
    res = _ask("员工 E-7 现在什么状态", hr_engine, hr_catalog)
    assert res.status == "answered", (res.status, res.text)
    assert "25" in res.text
    assert res.data["entity"]["facts_cut"] == {"skill": 25}


def test_a_list_projecting_a_fact_field_carries_every_value(
    hr_engine: Engine, hr_catalog: Catalog
) -> None:
    result = _run(
        'list employee where department_id = "D-1" select id, name, skill order by name asc',
        hr_engine,
        hr_catalog,
    )
    skills = {r.entity_id: r.values["skill"] for r in result.rows}
    assert skills == {"E-1": ("Go", "PostgreSQL"), "E-4": ("Go", "Kubernetes")}
    for row in result.rows:
        # the values shown are backed by the facts they come from
        assert _fact_ids(result, row.entity_id) <= set(row.evidence_ids)


def test_another_tenants_values_never_join(hr_engine: Engine, hr_catalog: Catalog) -> None:
    result = _run('status employee where id = "E-4"', hr_engine, hr_catalog, tenant="globex")
    (row,) = result.rows
    assert row.facts["skill"] == ("Kubernetes", "Python")
    assert all(e.tenant_id == "globex" for e in result.evidence)


def _snapshot(engine: Engine, catalog: Catalog, entity_id: str) -> tuple[Any, Any, Any]:
    bound = compile_source(
        f'status employee where id = "{entity_id}"', catalog, PlanContext(tenant_id=TENANT)
    ).bound
    assert bound is not None
    result = execute(bound, catalog, engine, TENANT)
    answer = render(bound.plan, result, language="zh", catalog=catalog)
    return bound.plan, result, answer


def _failed(plan: Any, result: Any, answer: Any, catalog: Catalog) -> tuple[str, ...]:
    verdict = verify(plan, result, answer, context=VerifyContext(tenant_id=TENANT, catalog=catalog))
    return verdict.failed


def test_the_verifier_refuses_a_fact_stated_in_part_or_invented(
    hr_engine: Engine, hr_catalog: Catalog
) -> None:
    plan, result, answer = _snapshot(hr_engine, hr_catalog, "E-4")
    assert _failed(plan, result, answer, hr_catalog) == ()
    for stated in (["Kubernetes"], ["Go", "Kubernetes", "Rust"]):
        entity = {**answer.data["entity"], "facts": {"skill": stated}}
        wrong = answer.model_copy(update={"data": {"entity": entity}})
        assert "consistent_with_result" in _failed(plan, result, wrong, hr_catalog), stated


def test_the_verifier_refuses_a_compare_beside_the_sets(
    hr_engine: Engine, hr_catalog: Catalog
) -> None:
    bound = compile_source(
        'compare employee where id in ("E-1", "E-13")', hr_catalog, PlanContext(tenant_id=TENANT)
    ).bound
    assert bound is not None
    result = execute(bound, hr_catalog, hr_engine, TENANT)
    answer = render(bound.plan, result, language="en", catalog=hr_catalog)
    assert _failed(bound.plan, result, answer, hr_catalog) == ()
    diffs = [
        {**d, "values": {**d["values"], "E-1": ["Go"]}} if d["field"] == "skill" else d
        for d in answer.data["differences"]
    ]
    wrong = answer.model_copy(update={"data": {**answer.data, "differences": diffs}})
    assert "consistent_with_result" in _failed(bound.plan, result, wrong, hr_catalog)


def test_every_execution_path_carries_every_value(hr_engine: Engine, hr_catalog: Catalog) -> None:
    """A listener on the engine sends statements through SQLAlchemy's Connection;
    without one they run on the bare sqlite3 / psycopg connection: one result."""
    bare = _run('status employee where id = "E-4"', hr_engine, hr_catalog)
    engine = make_engine(hr_engine.url.render_as_string(hide_password=False))
    seen: list[str] = []

    def note(*args: Any) -> None:
        seen.append(str(args[2]))

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        through = _run('status employee where id = "E-4"', engine, hr_catalog)
    finally:
        engine.dispose()
    assert any("semantic_facts.value_norm" in sql for sql in seen)  # the Connection path
    assert through.rows[0].facts == bare.rows[0].facts == {"skill": ("Go", "Kubernetes")}
    assert through.rows[0].evidence_ids == bare.rows[0].evidence_ids


def test_facts_past_the_row_cap_are_read_bounded_per_predicate(
    hr_engine: Engine, hr_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the facts of the rows read do not fit the call's cap, they are read
    again bounded per entity and predicate: E-7's 25 skills cannot crowd out
    E-13's, and E-7 still says how many it holds."""
    monkeypatch.setattr(compile_module, "FACTS_CAP", 24)  # E-13: 3 facts, E-7: 25
    result = _run(
        'list employee where department_id = "D-2" select id, name, skill limit 9',
        hr_engine,
        hr_catalog,
    )
    rows = {r.entity_id: r for r in result.rows}
    assert rows["E-13"].values["skill"] == ("Go", "Machine Learning")
    assert len(rows["E-7"].values["skill"]) == FACT_VALUES_CAP
    assert rows["E-7"].facts_cut == {"skill": 25}
    assert "entity facts ranked per predicate" in result.notes
    # a cap too small even for that: what was read still knows what it holds
    monkeypatch.setattr(compile_module, "FACTS_CAP", 10)
    cut = _run('status employee where id = "E-7" limit 3', hr_engine, hr_catalog)
    (row,) = cut.rows
    assert len(row.facts["skill"]) == 10 and row.facts_cut == {"skill": 25}
    assert "entity facts cut at 10 rows" in cut.notes
