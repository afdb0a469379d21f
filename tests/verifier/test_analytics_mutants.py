"""Mutants of right plans, on every curated deployment: none is answered.

Every case of the curated files (demo, support desk, online shop) that the rule
planner answers right gives its plan; each plan is mutated the ways a careless
LLM goes beside the question, and each mutant is handed to the whole pipeline
as the planner's plan for the same question:

* a grouping dropped, or replaced by another groupable key of the entity;
* the function changed (sum <-> avg, min <-> max, a measure counted instead);
* a filter dropped (the unfiltered total, or a wider set);
* a relation swapped for another declared relation of the entity, a path
  skipping a hop (not declared), a condition on related rows reversed.

A mutant the normalizer refuses is caught too; one that is answered fails the
test with the question and the mutant. A mutation that leaves the plan as it
was is not made."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from cases.build_cases import DEMO_FILE, SHOP_FILE, TICKETS_FILE
from deployments.fixtures import TICKETS_CATALOG
from deployments.shop import SHOP_CATALOG
from fixed_planner import FixedPlanner
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.dsl.catalog.load import demo_catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Aggregation, Filter, Grouping, Measure, Plan, QueryType
from qdsl.dsl.kinds.breakdown import groupable
from qdsl.dsl.plan.printer import to_text
from qdsl.evaluate import Case, judge, load_cases, plan_and_answer_asker
from qdsl.facts.db import make_engine
from qdsl.facts.demo import DEMO_NOW

_SWAPPED = {
    Aggregation.SUM: Aggregation.AVG,
    Aggregation.AVG: Aggregation.SUM,
    Aggregation.MIN: Aggregation.MAX,
    Aggregation.MAX: Aggregation.MIN,
}


@dataclass(frozen=True)
class Mutant:
    kind: str
    plan: Plan


def _careless(plan: Plan, **changes: object) -> Plan:
    """The plan an LLM would write: what it asks, the checks left to qdsl."""
    return plan.model_copy(update={"verifier_checks": (), "answer_contract": None, **changes})


def _function_mutants(plan: Plan, catalog: Catalog) -> Iterator[Mutant]:
    m = plan.measure
    if m is None:
        return
    ent = catalog.entities[plan.entity_type]
    if m.name is not None:
        declared = ent.measures[m.name]
        if declared.field is not None and declared.function in _SWAPPED:
            swapped = Measure(function=_SWAPPED[declared.function], field=declared.field)
            yield Mutant("function", _careless(plan, measure=swapped))
        if plan.query_type is QueryType.BREAKDOWN:
            yield Mutant("counted", _careless(plan, measure=None))
        return
    if m.function in _SWAPPED:
        swapped = Measure(function=_SWAPPED[m.function], field=m.field)
        yield Mutant("function", _careless(plan, measure=swapped))
    if plan.query_type is QueryType.BREAKDOWN and m.function is not Aggregation.COUNT:
        yield Mutant("counted", _careless(plan, measure=None))


def _grouping_mutants(plan: Plan, catalog: Catalog) -> Iterator[Mutant]:
    if plan.query_type is not QueryType.BREAKDOWN or not plan.group_by:
        return
    ent = catalog.entities[plan.entity_type]
    for i in range(len(plan.group_by)):
        rest = plan.group_by[:i] + plan.group_by[i + 1 :]
        if rest:
            yield Mutant("grouping dropped", _careless(plan, group_by=rest))
        keys = {x.field for x in plan.group_by}
        other = next((f for f in groupable(ent) if f not in keys), None)
        if other is not None:
            swapped = (*rest[:i], Grouping(field=other), *rest[i:])
            yield Mutant("grouping swapped", _careless(plan, group_by=swapped))
        names = plan.group_by[i].field.split(".")
        for rel in catalog.relation_steps.get(plan.entity_type, {}):
            if "." in plan.group_by[i].field and rel != names[0]:
                moved = Grouping(field=".".join((rel, *names[1:])), grain=plan.group_by[i].grain)
                swapped = (*rest[:i], moved, *rest[i:])
                yield Mutant("grouping on another relation", _careless(plan, group_by=swapped))
    if len(plan.group_by) == 1:
        # what a breakdown without its key is: the one total
        yield Mutant(
            "grouping dropped",
            _careless(
                plan,
                query_type=QueryType.AGGREGATE if plan.measure else QueryType.COUNT,
                group_by=(),
                limit=None,
            ),
        )


def _filter_mutants(plan: Plan, catalog: Catalog) -> Iterator[Mutant]:
    for i, f in enumerate(plan.filters):
        if f.value_source.value != "user_text":
            continue
        rest = plan.filters[:i] + plan.filters[i + 1 :]
        yield Mutant("filter dropped", _careless(plan, filters=rest))
        yield from _relation_mutants(plan, catalog, i, f)


def _relation_mutants(plan: Plan, catalog: Catalog, i: int, f: Filter) -> Iterator[Mutant]:
    names = f.field.split(".")
    steps = catalog.relation_steps.get(plan.entity_type, {})
    if names[0] not in steps:
        return

    def replaced(field: str, **more: object) -> Plan:
        new = f.model_copy(update={"field": field, **more})
        return _careless(plan, filters=(*plan.filters[:i], new, *plan.filters[i + 1 :]))

    for other in steps:
        if other != names[0]:
            yield Mutant("wrong relation", replaced(".".join((other, *names[1:]))))
    if len(names) > 2:
        yield Mutant("path not declared", replaced(".".join(names[1:])))
    if f.value is True or (f.value is False and f.operator.value == "is_null"):
        yield Mutant("related rows reversed", replaced(f.field, value=not f.value))


def mutants(plan: Plan, catalog: Catalog) -> list[Mutant]:
    out = [
        *_function_mutants(plan, catalog),
        *_grouping_mutants(plan, catalog),
        *_filter_mutants(plan, catalog),
    ]
    return [m for m in out if to_text(m.plan) != to_text(_careless(plan))]


@pytest.fixture
def deployment(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Catalog, str, datetime]]:
    name = request.param
    if name == "demo":
        url, catalog, cases, now = (
            request.getfixturevalue("sqlite_url"),
            demo_catalog(),
            DEMO_FILE,
            DEMO_NOW,
        )
    elif name == "tickets":
        url, catalog, cases = (
            request.getfixturevalue("tickets_sqlite_url"),
            load_catalog(TICKETS_CATALOG),
            TICKETS_FILE,
        )
        now = datetime.now(UTC)
    else:
        url, catalog, cases = (
            request.getfixturevalue("shop_sqlite_url"),
            load_catalog(SHOP_CATALOG),
            SHOP_FILE,
        )
        now = datetime.now(UTC)
    engine = make_engine(str(url))
    yield engine, catalog, str(cases), now
    engine.dispose()


@pytest.mark.parametrize("deployment", ["demo", "tickets", "shop"], indirect=True)
def test_no_mutant_of_a_right_plan_is_answered(
    deployment: tuple[Engine, Catalog, str, datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    engine, catalog, path, now = deployment
    rule = plan_and_answer_asker(engine=engine, catalog=catalog, default_now=now)
    right: list[tuple[Case, Plan]] = []
    for case in load_cases(path):
        res = rule(case)
        if (
            res.status == "answered"
            and res.plan is not None
            and judge(case, res).verdict == "right"
        ):
            right.append((case, res.plan))
    made: dict[str, int] = {}
    answered: list[str] = []
    refused = 0
    for case, plan in right:
        for m in mutants(plan, catalog):
            made[m.kind] = made.get(m.kind, 0) + 1
            ask = plan_and_answer_asker(
                engine=engine,
                catalog=catalog,
                default_now=now,
                planner=FixedPlanner(to_text(m.plan)),
            )
            try:
                res = ask(case)
            except QdslError:
                refused += 1  # refused as a plan (docs/python-api.md: raised, never answered)
                continue
            if res.status == "answered":
                plan_text = to_text(m.plan)
                answered.append(f"{case.id} {case.question!r} [{m.kind}]: {plan_text!r}")
    with capsys.disabled():
        total = sum(made.values())
        print(
            f"\nmutants of {len(right)} right plans: {total} {made}; {refused} refused as plans, "
            f"the others run and not answered; {len(answered)} answered"
        )
    assert not answered, "\n".join(answered)
    assert sum(made.values()) >= len(right)
