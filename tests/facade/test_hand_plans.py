"""Plans written by hand (tests/cases/shop_plans.toml) state the shop's curated questions.

A planner double returns the hand-written plan for the question asked, and every
case of tests/cases/shop.toml runs through the whole pipeline and the eval judge,
on SQLite and PostgreSQL: no answer is wrong, a stated plan is judged right unless
it is one the verifier asks back for (listed below with why), and the file names
every question once. Issue 22 asks for 95% of the questions stated; the plan
language states 100 of the 104 (96.2%): the four in the file's `unstatable` table
need a path of three relations (revenue, quantity × unit price, is a product
measure the shop's catalog declares; "no related row" is `payments is null`).
"""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cases.build_cases import SHOP_FILE
from sqlalchemy import create_engine

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.evaluate import load_cases, plan_and_answer_asker, run_cases
from qdsl.planner import PlanDraft

PLANS_FILE = Path(__file__).parents[1] / "cases" / "shop_plans.toml"
_PLANS = tomllib.loads(PLANS_FILE.read_text(encoding="utf-8"))
PLANS: dict[str, str] = _PLANS["plans"]
UNSTATABLE: dict[str, str] = _PLANS["unstatable"]
NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)

# The measured share (the issue asks 95%): raise it when the language states more.
STATED_AT_LEAST = 0.96

# Right plans the verifier asks back for: its question reader leaves a word of the
# question unapplied. Gaps of the verifier, not of the plans; each one answered
# later must leave this list.
# the value index ties these names to an order line's title and its product's name; the
# reader binds the nearer row (the line), so a plan naming the product's is asked back
_NEARER = "the reader binds the name to the line's title, not its product's name"
ASKED_BACK = {
    "最大的一笔付款金额是多少": "the measure word “一笔” is read as unapplied",
    "How many units were sold in total?": "“units sold” does not reach the units_sold measure",
    "How many units were sold per product category?": (
        "“units sold” is not read as units_sold, so “per” is not read as a grouping"
    ),
    "退款总额是多少": "“总额” is read as a sum of no field, not of the amount",
    "Which orders contain Garden Hose?": _NEARER,
    "包含 Garden Hose 的订单有哪些": _NEARER,
    "Which orders contain Smart Watch?": _NEARER,
    "包含 Smart Watch 的订单有哪些": _NEARER,
}


class _HandPlans:
    """Writes the hand-written plan of the question asked (a perfect LLM)."""

    name = "hand"

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        if question in UNSTATABLE:
            # what a planner writes for a question it cannot state: the entity alone
            return PlanDraft("unknown order", self.name)
        return PlanDraft(PLANS[question], self.name)


def _questions() -> list[str]:
    cases = tomllib.loads(SHOP_FILE.read_text(encoding="utf-8"))["case"]
    return [str(c["question"]) for c in cases]


def test_the_plans_file_names_every_question_of_the_shop_once() -> None:
    asked = set(_questions())
    assert not set(PLANS) & set(UNSTATABLE)
    assert set(PLANS) | set(UNSTATABLE) == asked
    assert set(ASKED_BACK) <= set(PLANS)
    assert all(reason.strip() for reason in UNSTATABLE.values())


def test_hand_plans_state_the_shop_questions_and_are_judged_right(
    shop_url: str, shop_catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = load_cases(SHOP_FILE)
    engine = create_engine(shop_url)
    try:
        ask = plan_and_answer_asker(
            engine=engine, catalog=shop_catalog, default_now=NOW, planner=_HandPlans()
        )
        report = run_cases(cases, ask)
    finally:
        engine.dispose()
    wrong = [
        f"{r.case.id} {r.case.question}: {'; '.join(r.reasons)}"
        for r in report.results
        if r.verdict == "wrong"
    ]
    stated = [r for r in report.results if r.case.question in PLANS]
    right = [r for r in stated if r.verdict == "right"]
    not_right = {r.case.question for r in stated if r.verdict != "right"}
    distinct = set(PLANS) | set(UNSTATABLE)
    with capsys.disabled():
        print(
            f"\nhand plans, shop: {len(PLANS)}/{len(distinct)} questions stated "
            f"({100 * len(PLANS) / len(distinct):.1f}%), {len(right)}/{len(stated)} stated "
            f"cases right, {len(UNSTATABLE)} unstatable"
        )
    assert not wrong, "\n".join(wrong)
    assert len(PLANS) / len(distinct) >= STATED_AT_LEAST
    assert not_right == set(ASKED_BACK), sorted(not_right ^ set(ASKED_BACK))
    # a question the plans cannot state is never answered
    assert all(r.verdict != "right" for r in report.results if r.case.question in UNSTATABLE)
