"""The `diagnose` query kind: the facts of the object (the latest one when none is named)."""

from __future__ import annotations

from qdsl.dsl.kinds.names import AnswerContract, EmptyResult, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape, needs_facts

KIND = QueryKind(
    QueryType.DIAGNOSE,
    AnswerContract.DIAGNOSIS_WITH_EVIDENCE,
    frozenset({"findings"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(entity_facts=True, snapshot=True, unusable=needs_facts),
    on_empty=EmptyResult.INSUFFICIENT,
    intent="why something failed",
    spellings=(
        "diagnosis",
        "debug",
        "root_cause",
        "why_failed",
        "为什么",
        "诊断",
    ),
    cues=(
        "为什么",
        "为何",
        "怎么回事",
        "什么原因",
        "原因是什么",
        "原因是",
        "为啥",
        "出什么问题",
        "出了什么问题",
        r"\bfail(?:s)?\b",
        r"\bbreak\b",
        r"\bbroke\b",
        r"\bgo wrong\b",
        r"\bwhy\b",
        r"\bwhat went wrong\b",
        r"\broot cause\b",
        r"\bcause of\b",
    ),
    cue_rank=20,
    policy=PlannerPolicy(
        singular=True, latest_when_unnamed=True, names_subject=True, residual_text=True
    ),
)
