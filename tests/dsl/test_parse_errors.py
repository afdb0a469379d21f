"""Structured errors for bad plans, compared as whole error objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qdsl.dsl.catalog import load_catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.plan.json_form import parse_json
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.parser import parse_text

VALUE_TOKENS = ["false", "number", "quoted string", "true"]


def error_of(parse: Any, source: Any) -> dict[str, Any]:
    with pytest.raises(PlanError) as caught:
        parse(source)
    assert caught.value.exit_code == 3
    result: dict[str, Any] = caught.value.to_dict()
    return result


def syntax(message: str, hint: str, **details: Any) -> dict[str, Any]:
    return {
        "type": "validation",
        "subtype": "syntax_error",
        "code": "validation/syntax_error",
        "message": message,
        "retryable": False,
        "hint": hint,
        "details": details,
    }


def test_sql_injection_in_a_field_name_is_a_syntax_error() -> None:
    assert error_of(parse_text, "list project where title; drop table projects") == syntax(
        "unexpected ';' at line 1, column 25",
        "`;` is not part of the plan language: one plan, no statement separators",
        line=1,
        column=25,
        excerpt="list project where title; drop table projects\n" + " " * 24 + "^",
        # `.` continues a path to a related entity's field (`customer.city`)
        expected=[".", "between", "comparison (= != ~= contains > >= < <=)", "in", "is", "not"],
        found=";",
    )


def test_double_equals() -> None:
    assert error_of(parse_text, 'count project where status == "active"') == syntax(
        "unexpected '=' at line 1, column 29",
        "compare with a single `=` (not `==`)",
        line=1,
        column=29,
        excerpt='count project where status == "active"\n' + " " * 28 + "^",
        expected=VALUE_TOKENS,
        found="=",
    )


def test_missing_quotes_on_the_second_line() -> None:
    assert error_of(parse_text, "count project\nwhere status = active") == syntax(
        "unexpected 'active' at line 2, column 16",
        'put the value in double quotes: "active"',
        line=2,
        column=16,
        excerpt="where status = active\n" + " " * 15 + "^",
        expected=VALUE_TOKENS,
        found="active",
    )


def test_caret_counts_wide_characters_twice() -> None:
    details = error_of(parse_text, "有没有 项目 where 市场 = 港股")["details"]
    assert details["column"] == 19
    assert details["excerpt"] == "有没有 项目 where 市场 = 港股\n" + " " * 25 + "^"


def test_few_expected_tokens_are_listed_in_the_hint() -> None:
    assert error_of(parse_text, "count project where a = 1 limit") == syntax(
        "unexpected end of input at line 1, column 32",
        "expected `integer`",
        line=1,
        column=32,
        excerpt="count project where a = 1 limit\n" + " " * 31 + "^",
        expected=["integer"],
        found="end of input",
    )


def test_header_only_half_written() -> None:
    assert error_of(parse_text, "count") == syntax(
        "unexpected end of input at line 1, column 6",
        "a plan starts with <query_type> <entity_type>, e.g. `count <entity_type>`",
        line=1,
        column=6,
        excerpt="count\n     ^",
        expected=["identifier"],
        found="end of input",
    )


def test_unknown_query_type_suggests() -> None:
    assert error_of(parse_text, "exsts project") == {
        "type": "validation",
        "subtype": "unknown_query_type",
        "code": "validation/unknown_query_type",
        "message": "unknown query type 'exsts'",
        "retryable": False,
        "hint": 'did you mean "existence"?',
        "details": {
            "line": 1,
            "column": 1,
            "excerpt": "exsts project\n^",
            "kind": "query_type",
            "word": "exsts",
            "suggestions": ["existence"],
            "allowed": [
                "aggregate",
                "breakdown",
                "compare",
                "count",
                "diagnose",
                "existence",
                "explain",
                "list",
                "status",
                "unknown",
            ],
        },
    }


def test_duplicate_clause() -> None:
    assert error_of(parse_text, "count project\nlimit 5\nlimit 6") == {
        "type": "validation",
        "subtype": "duplicate_clause",
        "code": "validation/duplicate_clause",
        "message": "the limit clause is written twice",
        "retryable": False,
        "hint": "merge the two limit clauses into one",
        "details": {"line": 3, "column": 1, "excerpt": "limit 6\n^", "clause": "limit"},
    }


def test_model_constraint_points_at_its_clause() -> None:
    assert error_of(parse_text, "count project limit 0") == {
        "type": "validation",
        "subtype": "invalid_plan",
        "code": "validation/invalid_plan",
        "message": "limit: Input should be greater than or equal to 1",
        "retryable": False,
        "hint": "fix the value at the caret",
        "details": {"line": 1, "column": 15, "excerpt": "count project limit 0\n" + " " * 14 + "^"},
    }


@pytest.mark.parametrize("source", ["", "  \n\t", "\ufeff"])
def test_empty_plan(source: str) -> None:
    assert error_of(parse_text, source) == {
        "type": "validation",
        "subtype": "empty_plan",
        "code": "validation/empty_plan",
        "message": "the plan is empty",
        "retryable": False,
        "hint": 'a plan needs at least "<query_type> <entity_type>", e.g. "count <entity_type>"',
        "details": {},
    }


def test_invalid_json_has_line_and_column() -> None:
    assert error_of(load_plan, '{"query_type": "count",\n "entity_type": "project",}') == {
        "type": "validation",
        "subtype": "invalid_json",
        "code": "validation/invalid_json",
        "message": "the plan is not valid JSON: Expecting property name enclosed in double quotes",
        "retryable": False,
        "hint": "check the JSON at line 2, column 27",
        "details": {"line": 2, "column": 27, "position": 50},
    }


def test_tenant_bound_false_is_refused() -> None:
    message = (
        "tenant_bound must be true: a plan cannot leave its tenant "
        "(the tenant is bound from the caller's context)"
    )
    plan = {"query_type": "count", "entity_type": "project", "scope": {"tenant_bound": False}}
    assert error_of(parse_json, plan) == {
        "type": "validation",
        "subtype": "invalid_plan",
        "code": "validation/invalid_plan",
        "message": f"invalid plan at /scope/tenant_bound: {message}",
        "retryable": False,
        "hint": "fix every problem listed in details.problems; `qdsl schema` shows the plan shape",
        "details": {
            "pointer": "/scope/tenant_bound",
            "problems": [{"pointer": "/scope/tenant_bound", "message": message}],
        },
    }


def test_every_json_problem_is_reported_sorted_by_pointer() -> None:
    plan = {
        "query_type": "exsts",
        "entity_type": "title; drop table projects",
        "filters": [
            {"field": "a", "operator": "==="},
            {"field": "b", "operator": "in", "value": "x", "extra": 1},
            {"field": "c", "operator": "gt"},
        ],
        "limit": 0,
        "lmit": 5,
    }
    error = error_of(parse_json, plan)
    assert error["message"] == (
        "invalid plan at /entity_type: 'title; drop table projects' is not a name "
        "(a letter, then letters, digits or _) (and 7 more)"
    )
    assert error["details"] == {
        "pointer": "/entity_type",
        "problems": [
            {
                "pointer": "/entity_type",
                "message": "'title; drop table projects' is not a name "
                "(a letter, then letters, digits or _)",
            },
            {
                "pointer": "/filters/0/operator",
                "message": "unknown operator '==='; did you mean \"equals\"?",
            },
            {"pointer": "/filters/1/extra", "message": "unknown key 'extra'"},
            {"pointer": "/filters/1/value", "message": "in takes a non-empty list of values"},
            {
                "pointer": "/filters/2/value",
                "message": "gt needs a value (use is_null to test for null)",
            },
            {"pointer": "/limit", "message": "Input should be greater than or equal to 1"},
            {"pointer": "/lmit", "message": "unknown key 'lmit'; did you mean 'limit'?"},
            {
                "pointer": "/query_type",
                "message": "unknown query type 'exsts'; did you mean \"existence\"?",
            },
        ],
    }


@pytest.mark.parametrize("key", ["\u00b9", "\u0663", "1\u00b2", "\uff11"])
def test_a_key_of_digits_that_are_not_ascii_is_an_unknown_key(key: str) -> None:
    """Keys are sorted in document order, array indexes as numbers: "¹" or "٣" are
    digits to `str.isdigit` but no index, and must not crash the sort."""
    error = error_of(parse_json, {key: None, "query_type": "count", "entity_type": "project"})
    assert error["details"]["problems"][0]["pointer"] == f"/{key}"


def test_seed_json_and_spec_text_agree() -> None:
    seed = (
        '{"plan_version": "v1", "query_type": "existence", "entity_type": "project",'
        ' "answer_contract": "yes_no_with_evidence",'
        ' "filters": [{"field": "market_theme", "operator": "equals_or_alias", "value": "A股",'
        ' "value_source": "user_text"}],'
        ' "scope": {"tenant_bound": true},'
        ' "projection": ["project_id", "title", "matched_evidence"],'
        ' "retrieval_policy": {"facts_first": true, "allow_fallback_text": true},'
        ' "verifier_checks": ["contract_matches_query_type", "evidence_backed",'
        ' "no_total_count_substitution"],'
        ' "clarify_on_empty": false}'
    )
    text = (
        'existence project contract yes_no_with_evidence where market_theme ~= "A股"\n'
        "select project_id, title, matched_evidence retrieval facts_first, fallback_text\n"
        "verify contract_matches_query_type, evidence_backed, no_total_count_substitution\n"
        "on_empty answer_not_found"
    )
    assert load_plan(seed) == load_plan(text) == load_plan("\ufeff  " + seed)


def test_closure_applies_to_both_forms() -> None:
    from_json = parse_json(
        {
            "query_type": "How many",
            "entity_type": "project",
            "filters": [
                {"field": "status", "operator": "EQ", "value": "active"},
                {"field": "owner_email", "operator": "is not null"},
                {"field": "kind", "operator": "Not-In", "value": ["a"], "value_source": "ctx"},
            ],
            "sort": [{"field": "id", "direction": "Descending"}],
        }
    )
    from_text = parse_text(
        'how_many project where status = "active" and owner_email is not null'
        ' and kind not in ("a") from ctx order by id desc'
    )
    assert from_json == from_text


def test_misspelled_keyword_suggests_the_keyword() -> None:
    assert error_of(parse_text, "count project\nwehre status = 1") == syntax(
        "unexpected 'wehre' at line 2, column 1",
        'did you mean "where"?',
        line=2,
        column=1,
        excerpt="wehre status = 1\n^",
        expected=[
            "about",
            "contract",
            "end of input",
            "group",
            "limit",
            "measure",
            "on_empty",
            "order",
            "project",
            "retrieval",
            "select",
            "tenant",
            "verify",
            "where",
        ],
        found="wehre",
    )


TICKETS_CATALOG = Path(__file__).parents[1] / "deployments" / "tickets" / "catalog.toml"


@pytest.mark.parametrize("source", ["", "count"])
def test_hints_name_the_catalogs_own_entity(source: str) -> None:
    """The parser knows no catalog; given one, its examples use that catalog's names,
    never a demo entity."""
    tickets = load_catalog(TICKETS_CATALOG)
    first = next(iter(tickets.entities))
    with pytest.raises(PlanError) as info:
        load_plan(source, catalog=tickets)
    assert f"count {first}" in (info.value.hint or "")
    assert "project" not in (info.value.hint or "")


def test_the_cli_hint_names_the_given_catalogs_entity() -> None:
    import json

    from click.testing import CliRunner

    from qdsl.cli.main import cli

    tickets = load_catalog(TICKETS_CATALOG)
    result = CliRunner().invoke(
        cli, ["--json", "compile", "--catalog", str(TICKETS_CATALOG), "--plan", "count"]
    )
    assert result.exit_code == 3
    hint = json.loads(result.stderr)["error"]["hint"]
    assert f"count {next(iter(tickets.entities))}" in hint
