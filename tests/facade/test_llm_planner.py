"""The LLM planner with a scripted `complete`: valid at once, repaired, given up."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError, PolicyError
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, extract_plan

CATALOG = demo_catalog()


class Script:
    """A fake completion: replies in order and records every prompt."""

    def __init__(self, replies: Iterable[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies[min(len(self.prompts), len(self.replies)) - 1]


GOOD = 'existence project where market_theme ~= "A股"'


def test_valid_at_once() -> None:
    script = Script([f"```qdsl\n{GOOD}\n```"])
    draft = LLMPlanner(script).plan("有没有 A 股项目", catalog=CATALOG)
    assert draft.text == GOOD
    assert [(a.number, a.ok) for a in draft.attempts] == [(1, True)]
    assert len(script.prompts) == 1
    prompt = script.prompts[0]
    assert "有没有 A 股项目" in prompt and "market_theme" in prompt and "header:" in prompt
    assert "owner_email" not in prompt and "secret_value" not in prompt


def test_repaired_after_one_error() -> None:
    script = Script(['existence project where markt_theme ~= "A股"', GOOD])
    draft = LLMPlanner(script).plan("有没有 A 股项目", catalog=CATALOG)
    assert draft.text == GOOD
    first, second = draft.attempts
    assert first.error_code is not None and first.error_code.startswith("validation/")
    assert second.ok
    repair = script.prompts[1]
    assert first.error_code in repair and "markt_theme" in repair
    assert "market_theme" in repair  # the hint ("did you mean") goes back too


def test_json_form_uses_the_schema() -> None:
    plan_json = '{"query_type": "count", "entity_type": "project"}'
    script = Script([plan_json])
    draft = LLMPlanner(script, form="json").plan("how many projects", catalog=CATALOG)
    assert draft.text == plan_json
    assert '"$defs"' in script.prompts[0] or '"properties"' in script.prompts[0]


@pytest.mark.parametrize("attempts", [1, 2, 4])
def test_gives_up_after_n_with_a_typed_error(attempts: int) -> None:
    script = Script(["SELECT * FROM projects"])
    planner = LLMPlanner(script, max_attempts=attempts)
    with pytest.raises(PlanError) as info:
        planner.plan("有没有 A 股项目", catalog=CATALOG)
    assert info.value.code == "validation/planner_gave_up"
    assert len(script.prompts) == attempts
    recorded = info.value.details["attempts"]
    assert [a["number"] for a in recorded] == list(range(1, attempts + 1))
    assert all(a["error_code"] for a in recorded)


def test_extract_plan_strips_fences() -> None:
    assert extract_plan("```\ncount project\n```") == "count project"
    assert extract_plan("  count project \n") == "count project"


def test_llm_planner_end_to_end(sqlite_engine: Engine) -> None:
    script = Script(['existence project where markt_theme ~= "A股"', GOOD])
    res = plan_and_answer(
        "有没有 A 股项目",
        "t1",
        engine=sqlite_engine,
        options=AnswerOptions(planner=LLMPlanner(script), now=DEMO_NOW),
    )
    assert res.status == "answered" and res.data["exists"] is True
    assert res.planner == "llm" and len(res.attempts) == 2


def test_a_planner_giving_up_fails_explicitly(sqlite_engine: Engine) -> None:
    script = Script(["I think there are 137 projects."])
    with pytest.raises(PlanError) as info:
        plan_and_answer(
            "有没有 A 股项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(planner=LLMPlanner(script), now=DEMO_NOW),
        )
    assert info.value.code == "validation/planner_gave_up"


def test_a_plan_that_will_not_normalize_fails_explicitly(sqlite_engine: Engine) -> None:
    """No free answer: the typed error of the normalizer comes out."""

    class Stubborn:
        name = "stubborn"

        def plan(self, question: str, **_: object) -> object:
            from qdsl.planner import PlanDraft

            return PlanDraft(text='existence project where owner_email = "x@y"', planner="x")

    with pytest.raises(PolicyError) as info:
        plan_and_answer(
            "有没有项目",
            "t1",
            engine=sqlite_engine,
            options=AnswerOptions(planner=Stubborn(), now=DEMO_NOW),
        )  # type: ignore[arg-type]
    assert info.value.code == "policy/sensitive_field"
