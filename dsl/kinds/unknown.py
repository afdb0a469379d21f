"""The `unknown` query kind. The question cannot be planned: clarify, never execute."""

from __future__ import annotations

from qdsl.dsl.kinds.names import AnswerContract, QueryType
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind

KIND = QueryKind(
    QueryType.UNKNOWN,
    AnswerContract.CLARIFY_OR_FAIL,
    frozenset({"clarification"}),
    must_cite=False,
    default_checks=(),
    intent="you cannot tell reliably: then write `unknown <entity>`",
    spellings=(
        "unclear",
        "未知",
    ),
    policy=PlannerPolicy(),
)
