"""The `list` query kind: the matching rows in the plan's order (else the default sort)."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.dsl.kinds.hooks import ConsistencyContext
from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape


def _total_agrees(c: ConsistencyContext) -> Iterator[str]:
    total = c.data.get("total")
    if total not in (None, c.matched):
        yield f"data.total is {total!r}, the execution found {c.matched}"


KIND = QueryKind(
    QueryType.LIST,
    AnswerContract.ENTITY_LIST,
    frozenset({"items", "total", "truncated"}),
    must_cite=False,
    default_checks=(VerifierCheck.COVERS_CONDITIONS, VerifierCheck.WITHIN_LIMIT),
    template=TemplateShape(counts=True),
    intent="which ones",
    spellings=(
        "which",
        "show",
        "哪些",
        "列出",
    ),
    cues=(
        "有哪些",
        "哪些",
        "是哪个",
        "哪个",
        "哪一个",
        "列出",
        "列一下",
        "列举",
        "清单",
        "有哪",
        r"\bwhich\b",
        r"\blist(?: all)?\b",
        r"\bshow (?:me )?(?:all )?(?:the )?",
        r"\bwhat are the\b",
    ),
    cue_rank=50,
    policy=PlannerPolicy(shows_fields=True, shows_ranked_field=True),
    default_sorted=True,
    consistent=_total_agrees,
)
