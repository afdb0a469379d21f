"""The `explain` query kind. An explanation from cited passages (the text_search columns)."""

from __future__ import annotations

from qdsl.dsl.kinds.names import AnswerContract, EmptyResult, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape, needs_text

KIND = QueryKind(
    QueryType.EXPLAIN,
    AnswerContract.EXPLANATION_WITH_CITATIONS,
    frozenset({"passages", "citations"}),
    must_cite=True,
    default_checks=(VerifierCheck.WITHIN_LIMIT,),
    template=TemplateShape(entity_facts=True, passages=True, unusable=needs_text),
    on_empty=EmptyResult.INSUFFICIENT,
    intent="how / what is",
    spellings=(
        "why",
        "how",
        "what_is",
        "define",
        "definition",
        "解释",
        "是什么",
    ),
    cues=(
        "是什么",
        "原理",
        "怎么工作",
        "如何工作",
        "介绍",
        "解释",
        "做什么",
        "干什么",
        "怎么实现",
        "如何实现",
        r"\bexplain\b",
        r"\bwhat does\b",
        r"\bwhat is\b",
        r"\bwhat's\b",
        r"\bhow does\b",
        r"\bdescribe\b",
        r"\bhow (?:is|are)\b(?=.* built\b)",
        r"\bhow (?:do|can|should|would) (?:i|we|you|one)\b",
        r"\bhow to\b",
        r"\bhow (?:is|are)\b",
        "如何",
        "怎么(?!样了|回事)",
        "怎样",
    ),
    cue_rank=70,
    policy=PlannerPolicy(text_fallback=True, residual_text=True, attribute_cue=True),
)
