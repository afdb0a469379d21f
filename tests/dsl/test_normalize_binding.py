"""Entity, contract, verifier-check, filter-field and operator binding."""

from __future__ import annotations

from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import NotCoveredError, PlanError, QdslError
from qdsl.dsl.ir import (
    AnswerContract,
    Filter,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Span,
    VerifierCheck,
)
from qdsl.dsl.kinds import KINDS, MANDATORY_CHECKS
from qdsl.dsl.normalize import DEFAULT_RULES, Env, normalize

CAT = demo_catalog()
SPAN = Span(line=3, column=7, end_line=3, end_column=20, start_pos=30, end_pos=43)


def plan(**kw: Any) -> Plan:
    kw.setdefault("query_type", QueryType.LIST)
    kw.setdefault("entity_type", "project")
    return Plan(**kw)


def error_of(p: Plan) -> dict[str, Any]:
    with pytest.raises(QdslError) as info:
        normalize(p, CAT)
    return info.value.to_dict()


@pytest.mark.parametrize("written", ["project", "Project", "PROJECT", "项目", "projects"])
def test_entity_binds_by_key_case_or_synonym(written: str) -> None:
    assert normalize(plan(entity_type=written), CAT).plan.entity_type == "project"


def test_misspelled_entity_is_refused_with_a_suggestion() -> None:
    assert error_of(plan(entity_type="projcet", span=SPAN)) == {
        "type": "validation",
        "subtype": "unknown_entity",
        "code": "validation/unknown_entity",
        "message": "unknown entity `projcet`",
        "retryable": False,
        "hint": 'did you mean "project"?',
        "details": {
            "path": "entity_type",
            "line": 3,
            "column": 7,
            "entity": "projcet",
            "suggestions": ["project"],
        },
    }


def test_entity_with_nothing_close_lists_the_known_ones() -> None:
    err = error_of(plan(entity_type="zzzzqqq"))
    assert err["hint"] == "known entities: config, doc, project, run, signal, task, user"
    assert err["details"]["suggestions"] == []


def test_query_type_the_entity_does_not_answer_is_not_covered() -> None:
    with pytest.raises(NotCoveredError) as info:
        normalize(plan(query_type=QueryType.EXPLAIN), CAT)
    assert info.value.to_dict() == {
        "type": "not_covered",
        "subtype": "unsupported_query_type",
        "code": "not_covered/unsupported_query_type",
        "message": "entity `project` does not answer `explain` questions",
        "retryable": False,
        "hint": (
            "query types of project: existence, count, list, status, compare, aggregate, breakdown"
        ),
        "details": {
            "path": "query_type",
            "query_type": "explain",
            "entity": "project",
            "allowed": [
                *("existence", "count", "list", "status", "compare", "aggregate", "breakdown")
            ],
        },
    }


def test_unknown_query_type_passes_to_clarify() -> None:
    out = normalize(plan(query_type=QueryType.UNKNOWN), CAT).plan
    assert out.answer_contract is AnswerContract.CLARIFY_OR_FAIL
    assert out.verifier_checks == MANDATORY_CHECKS


@pytest.mark.parametrize("qt", [QueryType.EXISTENCE, QueryType.COUNT, QueryType.LIST])
def test_contract_and_checks_default_per_query_type(qt: QueryType) -> None:
    out = normalize(plan(query_type=qt), CAT).plan
    assert (
        out.answer_contract
        is {
            QueryType.EXISTENCE: AnswerContract.YES_NO_WITH_EVIDENCE,
            QueryType.COUNT: AnswerContract.COUNT_SCALAR,
            QueryType.LIST: AnswerContract.ENTITY_LIST,
        }[qt]
    )
    assert out.verifier_checks == (
        *MANDATORY_CHECKS,
        *KINDS[qt].mandatory_checks,
        *KINDS[qt].default_checks,
    )


def test_existence_checks_are_the_documented_ones() -> None:
    out = normalize(plan(query_type=QueryType.EXISTENCE), CAT).plan
    assert [c.value for c in out.verifier_checks] == [
        "route_contract_internal",
        "tenant_consistent",
        "contract_matches_query_type",
        "evidence_backed",
        "consistent_with_result",
        "question_covered",
        "no_total_count_substitution",
        "covers_conditions",
        "within_limit",
    ]


def test_every_query_type_runs_the_mandatory_checks_and_fresh_evidence_only_when_asked() -> None:
    for qt in QueryType:
        checks = KINDS[qt].checks_for(())
        assert checks[: len(MANDATORY_CHECKS)] == MANDATORY_CHECKS
        assert VerifierCheck.FRESH_EVIDENCE not in checks
        assert VerifierCheck.FRESH_EVIDENCE in KINDS[qt].checks_for((), fresh=True)


def test_a_plan_cannot_remove_a_mandatory_check() -> None:
    p = plan(query_type=QueryType.COUNT, verifier_checks=(VerifierCheck.WITHIN_LIMIT,))
    out = normalize(p, CAT).plan
    assert out.verifier_checks == (
        *MANDATORY_CHECKS,
        VerifierCheck.NO_TOTAL_COUNT_SUBSTITUTION,
        VerifierCheck.WITHIN_LIMIT,
    )


def test_named_checks_are_kept_deduplicated_and_fresh_evidence_added() -> None:
    p = plan(
        verifier_checks=(VerifierCheck.EVIDENCE_BACKED, VerifierCheck.EVIDENCE_BACKED),
        retrieval_policy=RetrievalPolicy(require_fresh_fact=True),
    )
    out = normalize(p, CAT).plan
    assert out.verifier_checks == (*MANDATORY_CHECKS, VerifierCheck.FRESH_EVIDENCE)


def test_contract_mismatch_is_refused() -> None:
    p = plan(query_type=QueryType.COUNT, answer_contract=AnswerContract.ENTITY_LIST)
    assert error_of(p) == {
        "type": "validation",
        "subtype": "contract_mismatch",
        "code": "validation/contract_mismatch",
        "message": "answer_contract `entity_list` does not fit a `count` plan",
        "retryable": False,
        "hint": 'a count plan answers "count_scalar"; use it or drop answer_contract',
        "details": {
            "path": "answer_contract",
            "query_type": "count",
            "answer_contract": "entity_list",
            "expected": "count_scalar",
        },
    }


def test_unknown_filter_field_is_refused_with_a_suggestion() -> None:
    p = plan(filters=(Filter(field="stauts", operator=Operator.EQUALS, value="x", span=SPAN),))
    assert error_of(p) == {
        "type": "validation",
        "subtype": "unknown_field",
        "code": "validation/unknown_field",
        "message": "`stauts` is not a filterable field of project",
        "retryable": False,
        "hint": 'did you mean "status"?',
        "details": {
            "path": "filters[0].field",
            "line": 3,
            "column": 7,
            "entity": "project",
            "field": "stauts",
            "suggestions": ["status"],
        },
    }


def test_injection_shaped_field_name_is_an_unknown_field() -> None:
    p = plan(
        filters=(Filter(field="title; drop table projects", operator=Operator.EQUALS, value="x"),)
    )
    err = error_of(p)
    assert err["code"] == "validation/unknown_field"
    assert err["details"]["path"] == "filters[0].field"


def test_whitelisted_but_undeclared_column_is_not_filterable() -> None:
    # summary is searchable text, not a declared field: no operator is defined on it.
    err = error_of(plan(filters=(Filter(field="summary", operator=Operator.CONTAINS, value="x"),)))
    assert err["subtype"] == "unknown_field"


def test_filter_names_resolve_through_names_case_and_implicit_id_label() -> None:
    p = plan(
        filters=(
            Filter(field="project_id", operator=Operator.IN, value=(64, "65")),
            Filter(field="Status", operator=Operator.EQUALS, value="active"),
            Filter(field="name", operator=Operator.CONTAINS, value="Alpha"),
        )
    )
    out = normalize(p, CAT).plan
    assert out.filters == (
        Filter(field="id", operator=Operator.IN, value=("64", "65")),
        Filter(field="status", operator=Operator.EQUALS, value="active"),
        Filter(field="title", operator=Operator.CONTAINS, value="alpha"),
    )


def test_implicit_label_filter_on_an_entity_that_does_not_declare_it() -> None:
    # signal's label `message` is not under fields; equals/contains/in are allowed on it.
    p = plan(
        entity_type="signal",
        filters=(Filter(field="message", operator=Operator.CONTAINS, value="CPU"),),
    )
    assert normalize(p, CAT).plan.filters == (
        Filter(field="message", operator=Operator.CONTAINS, value="cpu"),
    )


def test_operator_not_allowed_names_the_allowed_ones() -> None:
    p = plan(filters=(Filter(field="status", operator=Operator.GT, value="active", span=SPAN),))
    assert error_of(p) == {
        "type": "validation",
        "subtype": "operator_not_allowed",
        "code": "validation/operator_not_allowed",
        "message": "operator `gt` is not allowed on project.status",
        "retryable": False,
        "hint": "project.status allows: equals, not_equals, in, not_in, equals_or_alias",
        "details": {
            "path": "filters[0].operator",
            "line": 3,
            "column": 7,
            "entity": "project",
            "field": "status",
            "operator": "gt",
            "allowed": ["equals", "not_equals", "in", "not_in", "equals_or_alias"],
            "suggestions": [],
        },
    }


def test_operator_suggestion_when_close() -> None:
    # budget allows gt/gte/lt/lte: asking `not_equals` on it suggests `equals`.
    p = plan(filters=(Filter(field="budget", operator=Operator.NOT_EQUALS, value=1),))
    err = error_of(p)
    assert err["subtype"] == "operator_not_allowed"
    assert err["details"]["suggestions"][0] == "equals"


def test_implicit_id_refuses_ordering_operators() -> None:
    err = error_of(plan(filters=(Filter(field="id", operator=Operator.GT, value="3"),)))
    assert err["details"]["allowed"] == ["equals", "not_equals", "in", "not_in"]


def test_rules_tuple_can_be_extended_and_replaced() -> None:
    seen: list[str] = []

    def record(p: Plan, env: Env) -> Plan:
        seen.append(p.entity_type)
        return p.model_copy(update={"clarify_on_empty": True})

    out = normalize(plan(entity_type="项目"), CAT, rules=(*DEFAULT_RULES, record))
    assert seen == ["project"] and out.plan.clarify_on_empty
    raw = normalize(plan(entity_type="项目"), CAT, rules=())
    assert raw.plan == plan(entity_type="项目")


def test_a_crashing_rule_becomes_an_internal_error() -> None:
    def broken(p: Plan, env: Env) -> Plan:
        raise KeyError("boom")

    with pytest.raises(QdslError) as info:
        normalize(plan(), CAT, rules=(broken,))
    assert info.value.to_dict()["code"] == "internal/normalizer_rule_crashed"
    assert not isinstance(info.value, PlanError)
