"""The rule planner builds each distinct plan once and shares it, exactly.

`plan_from_reading` keeps the plan of each distinct input (the reading's
plan-relevant fields with their values' types, the referenced objects, the
catalog's content): over the curated questions of both deployments the shared
plan is the one a fresh build gives, byte for byte, and readings that differ
only in a value's type (1, 1.0, True) get different plans.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from cases.build_cases import DEMO_FILE, TICKETS_FILE
from deployments.fixtures import TICKETS_CATALOG

from qdsl.dsl.catalog import demo_catalog, load_catalog
from qdsl.dsl.ir import Operator
from qdsl.dsl.question import Condition, read_question
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import rule

CATALOGS = {"demo": (DEMO_FILE, demo_catalog()), "tickets": (TICKETS_FILE, None)}


def _questions(path: Path) -> list[str]:
    return [c["question"] for c in tomllib.loads(path.read_text("utf-8"))["case"]]


@pytest.mark.parametrize("deployment", ["demo", "tickets"])
def test_the_shared_plan_is_the_fresh_one(deployment: str) -> None:
    path, catalog = CATALOGS[deployment]
    catalog = catalog or load_catalog(TICKETS_CATALOG)
    for question in _questions(path):
        reading = read_question(question, catalog, now=DEMO_NOW)
        first = rule.plan_from_reading(reading, catalog)
        again = rule.plan_from_reading(read_question(question, catalog, now=DEMO_NOW), catalog)
        fresh = rule._plan_from_reading(reading, catalog, ())
        assert again is first
        assert first.model_dump_json() == fresh.model_dump_json(), question


def test_values_of_another_type_get_their_own_plan() -> None:
    catalog = demo_catalog()
    reading = read_question("预算超过 20 万的项目有哪些", catalog, now=DEMO_NOW)
    plans = []
    for value in (1, 1.0, True):
        cond = Condition("budget", Operator.GT, value, "x")
        r = replace(reading, conditions=(cond,))
        plans.append(rule.plan_from_reading(r, catalog).model_dump_json())
    assert len(set(plans)) == 3
