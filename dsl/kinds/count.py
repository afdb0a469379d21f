"""The `count` query kind. A count of the matches: nothing matched is itself the answer (zero)."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.dsl.kinds.hooks import ConsistencyContext
from qdsl.dsl.kinds.names import AnswerContract, EmptyResult, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape


def _count_agrees(c: ConsistencyContext) -> Iterator[str]:
    if "count" in c.data and c.data["count"] != c.matched:
        yield f"data.count is {c.data['count']!r}, the execution counted {c.matched}"


KIND = QueryKind(
    QueryType.COUNT,
    AnswerContract.COUNT_SCALAR,
    frozenset({"count"}),
    must_cite=False,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    mandatory_checks=(VerifierCheck.NO_TOTAL_COUNT_SUBSTITUTION,),
    template=TemplateShape(counts=True, sample_only=True),
    on_empty=EmptyResult.ANSWER,
    intent="how many",
    spellings=(
        "how_many",
        "number_of",
        "多少",
        "几个",
    ),
    cues=(
        "有多少",
        "多少",
        "有几",
        "几个",
        "几项",
        "几条",
        "几家",
        "几篇",
        "数量",
        "总数",
        r"\bhow many\b",
        r"\bnumber of\b",
        r"\bcount(?: of)?\b",
    ),
    cue_rank=40,
    policy=PlannerPolicy(attribute_cue=True),
    limited=False,
    consistent=_count_agrees,
)
