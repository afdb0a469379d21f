"""Bounded prompts: the whole catalog when it is small, the touched slice within
the caller's budget when it is not (tokens approximated as bytes / 4)."""

from __future__ import annotations

from benchmarks.bench_llm_prompt import wide_catalog
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.planner import LLMPlanner
from qdsl.planner.prompt import approx_tokens, catalog_summary
from qdsl.planner.slice import touched_entities

WIDE = wide_catalog(50)


def test_a_small_catalog_goes_in_whole(tickets_catalog: Catalog) -> None:
    for catalog, question in [
        (demo_catalog(), "现在有多少个进行中的项目"),
        (tickets_catalog, "How many urgent tickets are there?"),
    ]:
        prompt = LLMPlanner(str).first_prompt(question, catalog)
        assert catalog_summary(catalog) in prompt


def test_a_wide_catalog_is_sliced_to_what_the_question_touches() -> None:
    question = "How many gadget7s are in review?"
    assert touched_entities(question, WIDE)[:2] == ["gadget7", "gadget6"]
    planner = LLMPlanner(str, prompt_budget=2000)
    prompt = planner.first_prompt(question, WIDE)
    assert approx_tokens(prompt) <= 2000
    assert "entity gadget7 " in prompt and "entity gadget6 " in prompt  # asked, referenced
    assert "entity gadget30 " not in prompt and question in prompt
    whole = LLMPlanner(str, prompt_budget=None).first_prompt(question, WIDE)
    assert len(prompt) * 4 < len(whole)


def test_a_tight_budget_keeps_the_asked_entity_with_few_values() -> None:
    question = "How many gadget7s are in review?"
    prompt = LLMPlanner(str, prompt_budget=1).first_prompt(question, WIDE)
    assert "entity gadget7 " in prompt and "entity gadget6 " not in prompt
    assert "values: draft, open, review, approved, shipped, ..." in prompt


def test_the_bounded_prompt_still_plans(tickets_catalog: Catalog) -> None:
    question = "How many gadget7s are in review?"
    prompts: list[str] = []

    def complete(prompt: str) -> str:
        prompts.append(prompt)
        return 'count gadget7 where stage = "review"'

    draft = LLMPlanner(complete, prompt_budget=2000).plan(question, catalog=WIDE)
    assert draft.text == 'count gadget7 where stage = "review"' and len(prompts) == 1


def test_the_prompt_says_how_a_count_per_group_is_planned() -> None:
    from qdsl.planner.prompt import build_prompt

    summary = catalog_summary(demo_catalog())
    line = "field created_at (datetime; operators: gt, gte, lt, lte, between; grains: "
    assert line + "month, quarter, year)" in summary
    prompt = build_prompt("每个状态有多少项目", demo_catalog())
    assert "`breakdown <entity> [measure sum(<field>)] group by <field>`" in prompt


def test_the_prompt_states_what_a_declared_product_computes(shop_catalog: Catalog) -> None:
    from qdsl.planner.schema import catalog_plan_schema

    summary = catalog_summary(shop_catalog)
    # the LLM names the measure; it never writes the product itself
    assert (
        "  measure revenue (sum(quantity × unit_price); users say: 销售额, 营业额, revenue, sales)"
        in summary
    )
    assert "  measure units_sold (sum(quantity); users say:" in summary
    names = catalog_plan_schema(shop_catalog)["$defs"]["Measure"]["properties"]["name"]
    assert "revenue" in names["anyOf"][0]["enum"]
