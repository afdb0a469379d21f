"""Each verifier check against hand-built results: a correct answer passes, and
each mutation of it is caught and named by the check that exists for it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from verifier_cases import (
    A_SHARE,
    BASELINE,
    context,
    count_result,
    existence_result,
    fact,
    plan,
    rendered,
    row,
    with_,
)

from qdsl.dsl.ir import AnswerContract, Filter, Operator, QueryType, VerifierCheck
from qdsl.executor.result import ExecutionResult
from qdsl.verifier import Answer, Issue, Outcome, Subject, verify

EXISTS = plan(QueryType.EXISTENCE, A_SHARE)


def _failed(verdict_failed: tuple[str, ...]) -> set[str]:
    return set(verdict_failed)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_correct_existence_answer_passes_every_check(language: str) -> None:
    answer = rendered(EXISTS, existence_result(), language)
    verdict = verify(EXISTS, existence_result(), answer, context=context())
    assert verdict.outcome is Outcome.PASS, verdict.issues
    assert verdict.failed == ()
    # the mandatory checks first, then existence's own and its defaults;
    # question_covered had no question to judge against: it did not run
    assert verdict.checks_run == (
        "route_contract_internal",
        "tenant_consistent",
        "contract_matches_query_type",
        "evidence_backed",
        "consistent_with_result",
        "no_total_count_substitution",
        "covers_conditions",
        "within_limit",
    )
    assert set(verdict.passed) == set(verdict.checks_run)
    assert verdict.skipped == ("question_covered",)
    assert answer.data["exists"] is True
    assert {m["id"] for m in answer.data["matches"]} == {"60", "61", "62"}


def test_total_count_in_text_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, text=f"有。系统里共有 {BASELINE} 个项目（市场为 A股）。依据：[fact:1]")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("no_total_count_substitution",)
    assert verdict.outcome is Outcome.RETRY_WITH_SAME_PLAN


def test_total_count_in_english_text_is_caught() -> None:
    good = rendered(EXISTS, existence_result(), "en")
    bad = with_(good, text=f"Yes, we have {BASELINE} projects (A-share). Evidence: [fact:1]")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert "no_total_count_substitution" in verdict.failed


def test_count_key_in_existence_data_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, data={**good.data, "count": BASELINE})
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert {"no_total_count_substitution", "contract_matches_query_type"} <= set(verdict.failed)


def test_filtered_count_answered_with_total_is_caught() -> None:
    p = plan(QueryType.COUNT, A_SHARE)
    good = rendered(p, count_result(3))
    assert verify(p, count_result(3), good, context=context()).ok
    bad = with_(good, text=f"共有 {BASELINE} 个项目（市场为 A股）。", data={"count": BASELINE})
    verdict = verify(p, count_result(3), bad, context=context())
    assert "no_total_count_substitution" in verdict.failed


def test_unfiltered_count_equal_to_total_is_fine() -> None:
    p = plan(QueryType.COUNT)
    result = count_result(BASELINE, baseline_total=None)
    assert verify(p, result, rendered(p, result), context=context()).ok


def test_ids_and_labels_are_not_amounts() -> None:
    # A project whose id or title holds the baseline number is not a substitution.
    result = existence_result(
        rows=(row(str(BASELINE), f"Plan {BASELINE}", ("fact:1",)),),
        evidence=(fact(1, str(BASELINE)),),
    )
    answer = rendered(EXISTS, result)
    assert str(BASELINE) in answer.text
    assert verify(EXISTS, result, answer, context=context()).ok


def test_dropped_condition_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, text="有。找到 3 个项目：#60、#61、#62。依据：[fact:1] [fact:2] [fact:3]")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("covers_conditions",)
    assert "market_theme" in verdict.issues[0].message


def test_alias_counts_as_naming_the_condition() -> None:
    good = rendered(EXISTS, existence_result(), "en")
    text = "Yes: 3 China A-share projects (#60, #61, #62). [fact:1] [fact:2] [fact:3]"
    assert verify(EXISTS, existence_result(), with_(good, text=text), context=context()).ok


def test_dropped_entity_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, text="有。找到 3 个 A股 相关的结果。依据：[fact:1]")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("covers_conditions",)
    assert "entity project" in verdict.issues[0].message


def test_fact_from_another_run_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, cited_evidence=(*good.cited_evidence, "fact:999"))
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("evidence_backed",)
    assert "fact:999" in verdict.issues[0].message


def test_inline_citation_from_another_run_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, text=good.text + " [fact:42]")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("evidence_backed",)


def test_evidence_stamped_by_another_execution_is_caught() -> None:
    foreign = fact(1, "60", execution_id="exec-0")
    result = existence_result(evidence=(foreign, fact(2, "61"), fact(3, "62")))
    answer = rendered(EXISTS, result)
    verdict = verify(EXISTS, result, answer, context=context())
    assert verdict.failed == ("evidence_backed",)
    assert "exec-0" in verdict.issues[0].message


def test_yes_without_citations_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, cited_evidence=(), text="有。找到 3 个项目（A股）。")
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("evidence_backed",)


def test_stale_fact_under_require_fresh_fact_is_caught() -> None:
    fresh_plan = plan(QueryType.EXISTENCE, A_SHARE, fresh=True)
    stale = fact(3, "62", valid_until=datetime(2026, 6, 30, tzinfo=UTC))
    result = existence_result(evidence=(fact(1, "60"), fact(2, "61"), stale))
    answer = rendered(fresh_plan, result)
    verdict = verify(fresh_plan, result, answer, context=context())
    assert verdict.failed == ("fresh_evidence",)
    assert verdict.outcome is Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE
    old = fact(3, "62", observed=datetime(2026, 3, 1, tzinfo=UTC))
    result = existence_result(evidence=(fact(1, "60"), fact(2, "61"), old))
    verdict = verify(fresh_plan, result, rendered(fresh_plan, result), context=context())
    assert verdict.failed == ("fresh_evidence",)
    assert "over 30 days" in verdict.issues[0].message


def test_stale_fact_without_freshness_requirement_is_only_a_warning() -> None:
    stale = fact(3, "62", valid_until=datetime(2026, 6, 30, tzinfo=UTC))
    result = existence_result(evidence=(fact(1, "60"), fact(2, "61"), stale))
    # fresh_evidence runs when the plan names it (or requires fresh facts) ...
    named = EXISTS.model_copy(update={"verifier_checks": (VerifierCheck.FRESH_EVIDENCE,)})
    verdict = verify(named, result, rendered(named, result), context=context())
    assert verdict.ok
    assert [i.check for i in verdict.issues] == ["fresh_evidence"]
    assert verdict.issues[0].level == "warning"
    # ... and not otherwise: a plan's checks are what runs, plus the mandatory ones
    verdict = verify(EXISTS, result, rendered(EXISTS, result), context=context())
    assert verdict.ok and "fresh_evidence" not in verdict.checks_run


def test_other_tenants_fact_is_caught() -> None:
    leaked = fact(3, "62", tenant="t2")
    result = existence_result(evidence=(fact(1, "60"), fact(2, "61"), leaked))
    verdict = verify(EXISTS, result, rendered(EXISTS, result), context=context())
    assert verdict.failed == ("tenant_consistent",)
    assert not verdict.retryable


def test_other_tenants_row_and_result_are_caught() -> None:
    result = existence_result(tenant_id="t2")
    verdict = verify(EXISTS, result, rendered(EXISTS, result), context=context())
    assert "tenant_consistent" in verdict.failed
    rows = (row("60", "x", ("fact:1",), tenant="t3"),)
    result = existence_result(rows=rows, evidence=(fact(1, "60"),))
    verdict = verify(EXISTS, result, rendered(EXISTS, result), context=context())
    assert verdict.failed == ("tenant_consistent",)


def test_mislabelled_contract_is_caught() -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, contract=AnswerContract.COUNT_SCALAR)
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert "contract_matches_query_type" in verdict.failed


def test_plan_beside_the_question_is_caught() -> None:
    p = plan(QueryType.COUNT, A_SHARE)
    answer = rendered(p, count_result(3))
    verdict = verify(
        p, count_result(3), answer, context=context(expected_query_type=QueryType.EXISTENCE)
    )
    assert verdict.failed == ("contract_matches_query_type",)
    assert verdict.outcome is Outcome.RETRY_WITH_CLARIFIED_PLAN


def test_over_limit_and_silent_truncation_are_caught() -> None:
    p = plan(QueryType.LIST, limit=2)
    rows = tuple(row(str(i), f"P{i}", ()) for i in range(3))
    result = ExecutionResult(
        execution_id="exec-1",
        tenant_id="t1",
        query_type=QueryType.LIST,
        entity_type="project",
        template="list",
        plan_hash="x",
        rows=rows,
        count=3,
    )
    verdict = verify(p, result, rendered(p, result), context=context())
    assert verdict.failed == ("within_limit",)
    ok_rows = rows[:2]
    result = result.model_copy(update={"rows": ok_rows, "truncated": True})
    good = rendered(p, result)
    assert good.data["truncated"] is True
    assert verify(p, result, good, context=context()).ok
    silent = with_(good, data={**good.data, "truncated": False})
    assert verify(p, result, silent, context=context()).failed == ("within_limit",)


def test_external_route_is_caught() -> None:
    answer = rendered(EXISTS, existence_result())
    verdict = verify(EXISTS, existence_result(), answer, context=context(route_mode="web"))
    assert verdict.failed == ("route_contract_internal",)
    assert not verdict.retryable


def test_yes_over_an_empty_result_is_caught() -> None:
    empty = existence_result(rows=(), evidence=())
    good = rendered(EXISTS, empty)
    assert good.data == {"exists": False, "matches": []}
    assert verify(EXISTS, empty, good, context=context()).ok
    lie = with_(good, data={"exists": True, "matches": []})
    assert "consistent_with_result" in verify(EXISTS, empty, lie, context=context()).failed


def test_status_filter_value_must_be_named() -> None:
    p = plan(QueryType.COUNT, (Filter(field="status", operator=Operator.EQUALS, value="暂停"),))
    answer = rendered(p, count_result(2))
    assert "暂停" in answer.text
    assert verify(p, count_result(2), answer, context=context()).ok
    bad = with_(answer, text="共有 2 个项目。")
    assert verify(p, count_result(2), bad, context=context()).failed == ("covers_conditions",)


def test_a_crashing_check_becomes_an_issue() -> None:
    def explodes(s: Subject) -> Iterator[Issue]:
        raise RuntimeError("boom")

    answer = rendered(EXISTS, existence_result())
    verdict = verify(
        EXISTS, existence_result(), answer, context=context(), checks=(explodes,)
    )
    assert verdict.failed == ("explodes",)
    assert "RuntimeError: boom" in verdict.issues[0].message
    assert verdict.outcome is Outcome.RETRY_WITH_SAME_PLAN


def test_callers_extend_the_checks() -> None:
    def no_exclamation(s: Subject) -> list[Issue]:
        if "!" in s.answer.text:
            return [Issue(check="no_exclamation", message="too excited")]
        return []

    answer = rendered(EXISTS, existence_result())
    loud = with_(answer, text=answer.text + "!")
    checks = (no_exclamation,)
    assert verify(EXISTS, existence_result(), answer, context=context(), checks=checks).ok
    verdict = verify(EXISTS, existence_result(), loud, context=context(), checks=checks)
    assert verdict.failed == ("no_exclamation",)


def test_answers_written_elsewhere_are_verified() -> None:
    """A RAG backend's own LLM text and the ids it cites, judged like our own."""
    theirs = Answer(
        contract=AnswerContract.YES_NO_WITH_EVIDENCE,
        text="是的，有 3 个 A 股项目：量化选股平台、Factor research、盘后风控。",
        data={"exists": True, "matches": [{"id": "60", "label": "量化选股平台"}]},
        cited_evidence=("fact:1", "fact:2"),
        language="zh",
    )
    assert verify(EXISTS, existence_result(), theirs, context=context()).ok
    wrong = theirs.model_copy(
        update={"text": f"是的，系统里有 {BASELINE} 个项目。", "cited_evidence": ("fact:77",)}
    )
    verdict = verify(EXISTS, existence_result(), wrong, context=context())
    assert {"evidence_backed", "no_total_count_substitution", "covers_conditions"} <= set(
        verdict.failed
    )


def test_a_matchs_name_does_not_state_the_condition() -> None:
    result = existence_result(
        rows=(row("60", "A股量化选股平台", ("fact:1",)),), evidence=(fact(1, "60"),)
    )
    good = rendered(EXISTS, result)
    assert verify(EXISTS, result, good, context=context()).ok
    bad = with_(good, text="有。找到 1 个项目：A股量化选股平台 (#60)。依据：[fact:1]")
    assert verify(EXISTS, result, bad, context=context()).failed == ("covers_conditions",)


@pytest.mark.parametrize(
    "text",
    [
        "有。我们一共有一百三十七个项目（A股）。依据：[fact:1]",
        "有。系统里共有壹佰叁拾柒个项目（A股）。依据：[fact:1]",
        "有。系统里共有１３７个项目（A股）。依据：[fact:1]",
        "Yes, we have one hundred and thirty-seven A-share projects. Evidence: [fact:1]",
        "Yes: a hundred and thirty-seven projects (A-share). Evidence: [fact:1]",
        "Yes, One Hundred Thirty Seven A-share projects. Evidence: [fact:1]",
    ],
)
def test_total_count_in_number_words_is_caught(text: str) -> None:
    good = rendered(EXISTS, existence_result())
    bad = with_(good, text=text)
    verdict = verify(EXISTS, existence_result(), bad, context=context())
    assert verdict.failed == ("no_total_count_substitution",)
    assert str(BASELINE) in verdict.issues[0].message


@pytest.mark.parametrize(
    ("baseline", "text"),
    [
        (14, "共有十四个项目（A股）。依据：[fact:1]"),
        (14, "We have fourteen A-share projects. Evidence: [fact:1]"),
        (20, "有二十个项目（A股）。依据：[fact:1]"),
        (107, "有一百零七个项目（A股）。依据：[fact:1]"),
        (2005, "有两千零五个项目（A股）。依据：[fact:1]"),
        (12000, "有1万2千个项目（A股）。依据：[fact:1]"),
        (21, "There are twenty-one A-share projects. Evidence: [fact:1]"),
    ],
)
def test_any_total_in_words_is_caught(baseline: int, text: str) -> None:
    result = existence_result(baseline_total=baseline)
    bad = with_(rendered(EXISTS, result), text=text)
    verdict = verify(EXISTS, result, bad, context=context())
    assert verdict.failed == ("no_total_count_substitution",)


def test_filtered_count_with_right_data_but_total_in_words_is_caught() -> None:
    p = plan(QueryType.COUNT, A_SHARE)
    good = rendered(p, count_result(3))
    bad = with_(good, text="A股项目一共有一百三十七个。")
    verdict = verify(p, count_result(3), bad, context=context())
    assert verdict.failed == ("no_total_count_substitution",)


@pytest.mark.parametrize(
    "text",
    [
        "有。找到三个项目（A股）：量化选股平台、Factor research、盘后风控。[fact:1] [fact:2]",
        "Yes, three A-share projects: 量化选股平台, Factor research, 盘后风控. [fact:1]",
        "有，统一检索后共三个 A股 项目，十分确定；其中之一是量化选股平台。[fact:1]",
        "Yes, three A-share projects; no one else has one of them. [fact:1]",
    ],
)
def test_the_match_count_in_words_passes(text: str) -> None:
    good = rendered(EXISTS, existence_result())
    verdict = verify(EXISTS, existence_result(), with_(good, text=text), context=context())
    assert verdict.ok, verdict.issues


@pytest.mark.parametrize(
    "text",
    [
        "没有。统一检索后没有 A股 项目，一个都没有。",
        "No. No one has tagged any project as A-share; not one of them.",
    ],
)
def test_words_that_only_look_like_one_are_not_amounts(text: str) -> None:
    # The tenant has one project and it is not A股: "one" here would be the total.
    empty = existence_result(rows=(), evidence=(), baseline_total=1)
    good = rendered(EXISTS, empty)
    verdict = verify(EXISTS, empty, with_(good, text=text), context=context())
    assert verdict.ok, verdict.issues
    stated = with_(good, text="没有。系统里只有一个项目，不是 A股。")
    assert verify(EXISTS, empty, stated, context=context()).failed == (
        "no_total_count_substitution",
    )


@pytest.mark.parametrize(
    "label", ["一百三十七号楼改造", "Plan One Hundred Thirty-Seven", "壹佰叁拾柒期"]
)
@pytest.mark.parametrize("language", ["zh", "en"])
def test_labels_in_number_words_are_not_amounts(label: str, language: str) -> None:
    result = existence_result(rows=(row("60", label, ("fact:1",)),), evidence=(fact(1, "60"),))
    answer = rendered(EXISTS, result, language)
    assert label in answer.text
    assert verify(EXISTS, result, answer, context=context()).ok
    theirs = with_(answer, text=f"有，{label}三个项目里的一个（A股）。[fact:1]")
    assert (
        "no_total_count_substitution"
        not in verify(EXISTS, result, theirs, context=context()).failed
    )


def test_an_id_in_words_after_its_entity_is_not_an_amount() -> None:
    result = existence_result(baseline_total=64)
    good = rendered(EXISTS, result)
    text = "有。找到 3 个项目（A股），与项目六十四同属一组。[fact:1]"
    assert verify(EXISTS, result, with_(good, text=text), context=context()).ok


def test_a_colon_leads_a_value_unless_it_counts_entities() -> None:
    good = rendered(EXISTS, existence_result())
    value = with_(good, text=good.text + f" 预算：{BASELINE}，预算：一百三十七")
    assert verify(EXISTS, existence_result(), value, context=context()).ok
    counted = with_(good, text=f"Yes: {BASELINE} A-share projects. [fact:1]")
    verdict = verify(EXISTS, existence_result(), counted, context=context())
    assert verdict.failed == ("no_total_count_substitution",)


def test_a_label_equal_to_a_spelling_states_it_only_outside_the_matchs_name() -> None:
    # Found by test_rendered_list_answers_pass: a project titled "项目" hid every "项目"
    # in the text, so the renderer's own answer failed "does not name the entity".
    titled = existence_result(rows=(row("1", "项目", ("fact:1",)),), evidence=(fact(1, "1"),))
    assert verify(EXISTS, titled, rendered(EXISTS, titled), context=context()).ok
    # ... while a match titled exactly "A股", named and nothing more, states no condition.
    named = existence_result(rows=(row("60", "A股", ("fact:1",)),), evidence=(fact(1, "60"),))
    good = rendered(EXISTS, named)
    assert verify(EXISTS, named, good, context=context()).ok
    bad = with_(good, text="有。找到 1 个项目：A股 (#60)。依据：[fact:1]")
    assert verify(EXISTS, named, bad, context=context()).failed == ("covers_conditions",)
