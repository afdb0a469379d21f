"""The issue's and SPEC's examples, through the real parsers and the normalizer."""

from __future__ import annotations

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import PlanError, QdslError
from qdsl.dsl.ir import (
    AnswerContract,
    Filter,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Scope,
    Sort,
    SortDirection,
    VerifierCheck,
)
from qdsl.dsl.normalize import NormalizedPlan, PlanContext, normalize
from qdsl.dsl.plan.json_form import parse_json
from qdsl.dsl.plan.parser import parse_text

CAT = demo_catalog()
CTX = PlanContext(tenant_id="t1")

SEED_JSON = """
{"plan_version": "v1", "query_type": "existence", "entity_type": "project",
 "answer_contract": "yes_no_with_evidence",
 "filters": [{"field": "market_theme", "operator": "equals_or_alias", "value": "A股",
              "value_source": "user_text"}],
 "scope": {"tenant_bound": true}, "projection": ["project_id", "title", "matched_evidence"],
 "retrieval_policy": {"facts_first": true, "allow_fallback_text": true},
 "verifier_checks": ["contract_matches_query_type", "evidence_backed",
                     "no_total_count_substitution"],
 "clarify_on_empty": false}
"""

SPEC_TEXT = """plan v1
existence project
where market_theme ~= "A股" and status in ("active", "paused")
select id, title
order by created_at desc
limit 20
retrieval facts_first, fallback_text
verify contract_matches_query_type, evidence_backed, no_total_count_substitution
on_empty answer_not_found
"""

# The seed names three checks; the normalized plan lists every check that
# runs: the mandatory ones first, then the named ones not already among them.
SEED_CHECKS = (
    VerifierCheck.ROUTE_CONTRACT_INTERNAL,
    VerifierCheck.TENANT_CONSISTENT,
    VerifierCheck.CONTRACT_MATCHES_QUERY_TYPE,
    VerifierCheck.EVIDENCE_BACKED,
    VerifierCheck.CONSISTENT_WITH_RESULT,
    VerifierCheck.QUESTION_COVERED,
    VerifierCheck.NO_TOTAL_COUNT_SUBSTITUTION,
)


def test_seed_json_normalizes() -> None:
    assert normalize(parse_json(SEED_JSON), CAT, CTX) == NormalizedPlan(
        plan=Plan(
            query_type=QueryType.EXISTENCE,
            entity_type="project",
            answer_contract=AnswerContract.YES_NO_WITH_EVIDENCE,
            filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),),
            scope=Scope(tenant_id="t1"),
            projection=("id", "title", "matched_evidence"),
            limit=20,
            retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
            verifier_checks=SEED_CHECKS,
        ),
        warnings=(),
    )


def test_spec_text_example_normalizes_to_existence_with_evidence() -> None:
    assert normalize(parse_text(SPEC_TEXT), CAT, CTX) == NormalizedPlan(
        plan=Plan(
            query_type=QueryType.EXISTENCE,
            entity_type="project",
            answer_contract=AnswerContract.YES_NO_WITH_EVIDENCE,
            filters=(
                Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A股"),
                Filter(field="status", operator=Operator.IN, value=("active", "paused")),
            ),
            scope=Scope(tenant_id="t1"),
            projection=("id", "title"),
            sort=(Sort(field="created_at", direction=SortDirection.DESC),),
            limit=20,
            retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
            verifier_checks=SEED_CHECKS,
        ),
        warnings=(),
    )


def test_text_and_json_forms_of_one_question_normalize_equal() -> None:
    text = 'count 项目 where market_theme ~= "A-share" and status = "进行中"'
    json = (
        '{"query_type": "how_many", "entity_type": "projects", "filters": ['
        '{"field": "market_theme", "operator": "equals_or_alias", "value": "沪深A股"},'
        '{"field": "status", "operator": "equals", "value": "Active"}]}'
    )
    a = normalize(parse_text(text), CAT, CTX)
    b = normalize(parse_json(json), CAT, CTX)
    assert a == b
    assert a.plan.filters[0].value == "A股" and a.plan.filters[1].value == "active"


def test_huge_limit_is_clamped_with_a_warning() -> None:
    out = normalize(parse_text("list project limit 1000000000"), CAT, CTX)
    assert (out.plan.limit, out.warnings) == (
        200,
        ("limit 1000000000 clamped to 200 (max_limit of project)",),
    )


@pytest.mark.parametrize(
    ("text", "code", "hint"),
    [
        ("existence projcet", "validation/unknown_entity", 'did you mean "project"?'),
        ('list project where stauts = "x"', "validation/unknown_field", 'did you mean "status"?'),
        (
            'list project where status contains "x"',
            "validation/operator_not_allowed",
            "project.status allows: equals, not_equals, in, not_in, equals_or_alias",
        ),
        (
            "list project order by status",
            "validation/unknown_sort_field",
            "known sort fields of project: budget, created_at, title",
        ),
        (
            'list project where status = "actve"',
            "validation/unknown_value",
            'did you mean "active"?',
        ),
    ],
)
def test_text_plans_refused_with_typed_errors(text: str, code: str, hint: str) -> None:
    with pytest.raises(PlanError) as info:
        normalize(parse_text(text), CAT, CTX)
    assert (info.value.code, info.value.hint, info.value.exit_code) == (code, hint, 3)
    assert info.value.details["line"] == 1


def test_error_position_points_at_the_filter_in_text() -> None:
    with pytest.raises(PlanError) as info:
        normalize(parse_text('list project\nwhere status = "a"\n  and budgte > 3'), CAT, CTX)
    details = info.value.details
    assert (details["path"], details["line"], details["column"]) == ("filters[1].field", 3, 7)


def test_injection_shaped_names_never_reach_the_normalizer() -> None:
    with pytest.raises(QdslError) as info:
        parse_text('list project where title; drop table projects = "x"')
    assert info.value.code == "validation/syntax_error"


def test_tenant_in_text_differing_from_the_caller_is_a_policy_error() -> None:
    with pytest.raises(QdslError) as info:
        normalize(parse_text("list project tenant t2"), CAT, CTX)
    assert (info.value.code, info.value.exit_code) == ("policy/tenant_scope_mismatch", 6)


def test_unknown_operator_in_either_form_is_refused_typed() -> None:
    with pytest.raises(PlanError) as text_err:
        normalize(parse_text('list project where status == "active"'), CAT, CTX)
    assert (text_err.value.code, text_err.value.hint) == (
        "validation/syntax_error",
        "compare with a single `=` (not `==`)",
    )
    bad = '{"query_type": "list", "entity_type": "project", "filters": [%s]}'
    with pytest.raises(PlanError) as json_err:
        parse_json(bad % '{"field": "status", "operator": "regex", "value": "a"}')
    assert json_err.value.details["pointer"] == "/filters/0/operator"
    # `like` is a known spelling of contains, which status does not allow.
    with pytest.raises(PlanError) as op_err:
        normalize(parse_json(bad % '{"field": "status", "operator": "like", "value": "a"}'), CAT)
    assert op_err.value.to_dict() == {
        "type": "validation",
        "subtype": "operator_not_allowed",
        "code": "validation/operator_not_allowed",
        "message": "operator `contains` is not allowed on project.status",
        "retryable": False,
        "hint": "project.status allows: equals, not_equals, in, not_in, equals_or_alias",
        "details": {
            "path": "filters[0].operator",
            "entity": "project",
            "field": "status",
            "operator": "contains",
            "allowed": ["equals", "not_equals", "in", "not_in", "equals_or_alias"],
            "suggestions": [],
        },
    }
