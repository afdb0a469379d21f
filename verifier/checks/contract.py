"""contract_matches_query_type: the answer has the shape the question asked for."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.dsl.kinds import kind_for_contract, kind_of
from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue, Outcome

NAME = "contract_matches_query_type"


def contract_matches_query_type(s: Subject) -> Iterator[Issue]:
    plan, answer = s.plan, s.answer
    expected = kind_of(plan.query_type).contract
    asked = s.context.expected_query_type
    if asked is not None and asked is not plan.query_type:
        # The plan answers another question than the one asked (a count plan for
        # "有没有 …"): a true answer beside the question must not leave.
        yield error(
            NAME,
            f"the question asks for {asked.value} but the plan is {plan.query_type.value}",
            Outcome.RETRY_WITH_CLARIFIED_PLAN,
        )
    if plan.answer_contract is not None and plan.answer_contract is not expected:
        yield error(
            NAME,
            f"plan contract {plan.answer_contract.value} does not fit query type "
            f"{plan.query_type.value} (expected {expected.value})",
            Outcome.RETRY_WITH_CLARIFIED_PLAN,
        )
    if s.result.query_type is not plan.query_type:
        yield error(
            NAME,
            f"the result is for a {s.result.query_type.value} query, "
            f"the plan is {plan.query_type.value}",
        )
    if answer.contract is not expected:
        yield error(
            NAME,
            f"answer contract {answer.contract.value} does not fit query type "
            f"{plan.query_type.value} (expected {expected.value})",
        )
    keys = set(answer.data)
    want = kind_for_contract(answer.contract).data_keys
    if keys != want:
        missing = sorted(want - keys)
        extra = sorted(keys - want)
        yield error(
            NAME,
            f"answer data keys do not match {answer.contract.value}: "
            f"missing {missing}, unexpected {extra}",
        )
