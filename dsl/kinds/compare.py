"""The `compare` query kind. The differences between two or more named objects."""

from __future__ import annotations

from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape

KIND = QueryKind(
    QueryType.COMPARE,
    AnswerContract.COMPARISON_WITH_BASIS,
    frozenset({"subjects", "differences"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS,),
    template=TemplateShape(entity_facts=True, snapshot=True, min_subjects=2),
    intent="difference between objects",
    spellings=(
        "comparison",
        "diff",
        "difference",
        "versus",
        "vs",
        "区别",
        "比较",
        "对比",
    ),
    cues=(
        "有什么区别",
        "有何区别",
        "区别",
        "对比",
        "比较",
        "差异",
        "差别",
        "有何不同",
        "有什么不同",
        r"\bcompare\b",
        r"\bcomparison\b",
        r"\bdiffer(?:ence|ences|s)?\b",
        r"\bvs\.?(?!\w)",
        r"\bversus\b",
    ),
    cue_rank=10,
    policy=PlannerPolicy(shows_fields=True, names_subject=True),
)
