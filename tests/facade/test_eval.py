"""qdsl.evaluate: loading case files, judging answers, the reliability score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdsl.dsl.errors import DatabaseError, InternalError, UsageError
from qdsl.dsl.ir import AnswerContract
from qdsl.evaluate import Case, CaseResult, Report, judge, load_cases, run_cases
from qdsl.pipeline import AnswerResult


def _result(
    status: str = "answered",
    contract: str | None = None,
    data: dict[str, Any] | None = None,
    text: str = "",
) -> AnswerResult:
    return AnswerResult(
        status=status,  # type: ignore[arg-type]
        trace_id="t",
        language="en",
        answer_contract=AnswerContract(contract) if contract else None,
        text=text,
        data=data or {},
    )


def _case(**expect: Any) -> Case:
    return Case.model_validate({"id": "c", "question": "q", "tenant": "t", "expect": expect})


# -- loading -------------------------------------------------------------------------


def test_toml_defaults_fill_every_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(
        '[defaults]\ntenant = "acme"\nnow = "2026-06-15T12:00:00Z"\n\n'
        '[[case]]\nid = "a"\nquestion = "How many tickets?"\nexpect = { count = 3 }\n\n'
        '[[case]]\nid = "b"\nquestion = "嗯"\ntenant = "globex"\n'
        'expect = { status = ["clarify", "not_covered"] }\n',
        encoding="utf-8",
    )
    a, b = load_cases(path)
    assert (a.tenant, a.expect.count, a.expect.status) == ("acme", 3, ("answered",))
    assert a.now is not None and a.now.isoformat() == "2026-06-15T12:00:00+00:00"
    assert (b.tenant, b.expect.status) == ("globex", ("clarify", "not_covered"))


def test_jsonl_cases_and_numeric_ids(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"id": "x", "question": "list", "tenant": "t1", "expect": {"ids": [60, "64"]}},
        {"question": "no id given", "tenant": "t1"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    x, second = load_cases(path)
    assert x.expect.ids == ("60", "64")
    assert second.id == "cases.jsonl#2" and second.expect.status == ("answered",)


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[[case]]\nid = "a"\nquestion = "q"\n\n'
        '[[case]]\nid = "a"\nquestion = "q"\ntenant = "t"\nexpect = { status = "maybe" }\n\n'
        '[[case]]\nquestion = "q"\ntenant = "t"\nexpect = { count = -1, colour = "red" }\n',
        encoding="utf-8",
    )
    with pytest.raises(UsageError) as info:
        load_cases(path)
    problems = info.value.details["problems"]
    assert info.value.subtype == "invalid_cases"
    assert any("case[0].tenant" in p for p in problems)
    assert any("case[1].expect.status" in p for p in problems)
    assert any("case[2].expect.count" in p for p in problems)
    assert any("case[2].expect.colour" in p for p in problems)


@pytest.mark.parametrize(
    ("name", "text"),
    [("a.toml", "[[case]\n"), ("a.toml", "[other]\nx = 1\n"), ("a.jsonl", "[1]\n")],
)
def test_unreadable_files_are_usage_errors(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError):
        load_cases(path)
    with pytest.raises(UsageError):
        load_cases(tmp_path / "missing.toml")


# -- judging -------------------------------------------------------------------------


def test_a_matching_answer_is_right() -> None:
    data = {"items": [{"id": "TCK-1"}, {"id": "TCK-2"}], "total": 2, "truncated": False}
    case = _case(contract="entity_list", count=2, ids=["TCK-2", "TCK-1"], mentions=["tck-1"])
    verdict = judge(case, _result(contract="entity_list", data=data, text="TCK-1, TCK-2"))
    assert (verdict.verdict, verdict.reasons) == ("right", ())


@pytest.mark.parametrize(
    ("expect", "contract", "data", "reason"),
    [
        ({"count": 0}, "count_scalar", {"count": 14}, "count 14, expected 0"),
        ({"exists": False}, "yes_no_with_evidence", {"exists": True, "matches": []}, "exists"),
        ({"contract": "count_scalar"}, "entity_list", {"items": []}, "contract entity_list"),
        ({"ids": ["1"]}, "entity_list", {"items": [{"id": "1"}, {"id": "2"}]}, "names ['2']"),
        ({"ids": ["1", "3"]}, "entity_list", {"items": [{"id": "1"}]}, "misses ['3']"),
        ({"ids": ["1"]}, "count_scalar", {"count": 1}, "names no ids"),
        ({"fields": {"budget": 5}}, "entity_snapshot", {"entity": {"budget": 6.0}}, "budget"),
        ({"mentions": ["Li Wei"]}, "count_scalar", {"count": 2}, "does not mention 'Li Wei'"),
        ({"value": 98.5}, "count_scalar", {"count": 98}, "value None, expected 98.5"),
        ({"value": 98.5}, "count_scalar", {"value": 98.0}, "value 98.0"),
        ({"groups": {"a": 1}}, "entity_list", {"items": []}, "has no groups"),
        ({"groups": {"a": 1}}, "count_scalar", {"groups": [{"key": "b", "value": 1}]}, "'b'"),
        ({"groups": {"a": 1}}, "count_scalar", {"groups": [{"key": "a", "value": 2}]}, "= 2"),
        (
            {"groups": {"a": 1, "b": 2}},
            "count_scalar",
            {"groups": [{"key": "a", "value": 1}]},
            "'b'",
        ),
    ],
)
def test_an_answer_that_contradicts_an_expectation_is_wrong(
    expect: dict[str, Any], contract: str, data: dict[str, Any], reason: str
) -> None:
    verdict = judge(_case(**expect), _result(contract=contract, data=data))
    assert verdict.verdict == "wrong"
    assert any(reason in r for r in verdict.reasons)


def test_aggregate_values_and_groups_are_judged_by_key_and_value() -> None:
    two = {"groups": [{"keys": ["2025-01", "web"], "value": 3}, {"key": "2025-02", "value": 1.0}]}
    case = _case(groups={"2025-01 / web": 3.0, "2025-02": 1}, value=4)
    verdict = judge(case, _result(data={**two, "value": 4.0}))
    assert (verdict.verdict, verdict.reasons) == ("right", ())


def test_a_truncated_list_is_judged_on_what_it_shows() -> None:
    data = {"items": [{"id": "1"}], "total": 3, "truncated": True}
    shown = _result(contract="entity_list", data=data)
    assert judge(_case(ids=["1", "2", "3"]), shown).verdict == "right"
    assert judge(_case(ids=["2", "3"]), shown).verdict == "wrong"


def test_snapshot_fields_read_columns_and_facts() -> None:
    entity = {"id": "TCK-7", "priority": "urgent", "refund_amount": 1200.0}
    entity["facts"] = {"area": "SSO"}
    case = _case(ids=["TCK-7"], fields={"priority": "URGENT", "refund_amount": 1200, "area": "sso"})
    verdict = judge(case, _result(contract="entity_snapshot", data={"entity": entity}))
    assert verdict.verdict == "right", verdict.reasons
    missing = judge(_case(fields={"closed_at": None}), _result(contract="entity_snapshot"))
    assert missing.verdict == "right"


@pytest.mark.parametrize("status", ["clarify", "insufficient_evidence", "not_covered", "gated"])
def test_an_abstention_is_safe_unless_the_case_expects_it(status: str) -> None:
    assert judge(_case(count=3), _result(status)).verdict == "safe"
    assert judge(_case(status=status), _result(status)).verdict == "right"


def test_an_expected_abstention_must_name_the_words() -> None:
    case = _case(status=["clarify", "answered"], count=0, mentions=["欧洲"])
    assert judge(case, _result("clarify", text="“欧洲” is not applied")).verdict == "right"
    assert judge(case, _result("clarify", text="be more specific")).verdict == "safe"
    text_match = _result(contract="count_scalar", data={"count": 0}, text="含“欧洲”: 0")
    assert judge(case, text_match).verdict == "right"
    assert judge(case, _result(contract="count_scalar", data={"count": 14})).verdict == "wrong"


def test_an_answer_where_only_abstentions_are_right_is_wrong() -> None:
    case = _case(status=["clarify", "insufficient_evidence"])
    verdict = judge(case, _result(contract="explanation_with_citations", text="5 docs"))
    assert verdict.verdict == "wrong"
    assert verdict.reasons == ("answered, expected clarify or insufficient_evidence",)


# -- running and scoring ------------------------------------------------------------


def test_a_failing_case_is_wrong_and_a_database_error_stops_the_run() -> None:
    cases = [_case(count=1), _case(count=2)]

    def crash(case: Case) -> AnswerResult:
        if case.expect.count == 1:
            raise KeyError("run")
        raise InternalError("boom", "broken")

    report = run_cases(cases, crash)
    assert [r.verdict for r in report.results] == ["wrong", "wrong"]
    assert "KeyError" in report.results[0].reasons[0]

    def down(case: Case) -> AnswerResult:
        raise DatabaseError("unreachable", "no database")

    with pytest.raises(DatabaseError):
        run_cases(cases, down)


verdicts = st.lists(st.sampled_from(["right", "safe", "wrong"]), max_size=60)


def _report(kinds: list[str]) -> Report:
    case = _case()
    return Report(tuple(CaseResult(case, v, "answered", "") for v in kinds))  # type: ignore[arg-type]


@given(verdicts, st.floats(min_value=0, max_value=1000))
def test_reliability_is_right_minus_penalised_wrong_per_case(kinds: list[str], c: float) -> None:
    report = _report(kinds)
    n = len(kinds)
    expected = (kinds.count("right") - c * kinds.count("wrong")) / n if n else 0.0
    assert report.reliability(c) == pytest.approx(expected)
    assert report.reliability(c + 1) <= report.reliability(c) + 1e-12
    summary = report.to_dict()
    assert summary["right"] + summary["safe"] + summary["wrong"] == n
    assert set(summary["reliability"]) == {"c=0", "c=10", "c=N"}


@given(verdicts)
def test_at_c_n_one_wrong_answer_outweighs_every_right_one(kinds: list[str]) -> None:
    report = _report(kinds)
    if "wrong" in kinds:
        assert report.reliability(report.penalties()["N"]) <= 0
    if set(kinds) <= {"safe"}:
        assert report.reliability(report.penalties()["N"]) == 0
