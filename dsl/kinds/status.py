"""The `status` query kind. One object's snapshot: its columns and every fact it holds."""

from __future__ import annotations

from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape

KIND = QueryKind(
    QueryType.STATUS,
    AnswerContract.ENTITY_SNAPSHOT,
    frozenset({"entity"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(entity_facts=True, snapshot=True),
    intent="state of one object",
    spellings=(
        "state",
        "snapshot",
        "状态",
        "what_state",
    ),
    cues=(
        "现在什么状态",
        "什么状态",
        "状态如何",
        "状态是什么",
        "状态怎么样",
        "进展如何",
        "怎么样了",
        r"\bwhat(?:'s| is) the (?:status|state) of\b",
        r"\bstatus of\b",
        r"\bstate of\b",
        r"\bwhat status\b",
    ),
    cue_rank=30,
    policy=PlannerPolicy(
        shows_fields=True, needs_subject=True, names_subject=True, attribute_cue=True
    ),
)
