"""The `existence` query kind: a yes/no, the matching rows its evidence."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.dsl.kinds.hooks import ConsistencyContext
from qdsl.dsl.kinds.names import AnswerContract, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import PlannerPolicy, QueryKind, TemplateShape


def _exists_agrees(c: ConsistencyContext) -> Iterator[str]:
    exists = c.data.get("exists")
    if bool(exists) != (c.matched > 0):
        yield f"data.exists is {exists!r} but the execution matched {c.matched}"


KIND = QueryKind(
    QueryType.EXISTENCE,
    AnswerContract.YES_NO_WITH_EVIDENCE,
    frozenset({"exists", "matches"}),
    must_cite=True,
    default_checks=(VerifierCheck.COVERS_CONDITIONS, VerifierCheck.WITHIN_LIMIT),
    mandatory_checks=(VerifierCheck.NO_TOTAL_COUNT_SUBSTITUTION,),
    template=TemplateShape(),
    intent="does X exist",
    spellings=(
        "exists",
        "exist",
        "any",
        "is_there",
        "are_there",
        "有没有",
        "是否存在",
        "是否有",
    ),
    cues=(
        "有没有",
        "是否存在",
        "是否有",
        "存不存在",
        "有无",
        "是不是有",
        "(?<![没])有(?=.{0,24}[吗么嘛])",
        r"[吗么嘛](?=\W*$)",
        r"\bare there\b",
        r"\bis there\b",
        r"\bdo we have\b",
        r"\bdo (?:any )?(?=\w+ exist)",
        r"\bexists?\b",
        r"\bany\b",
    ),
    cue_rank=60,
    policy=PlannerPolicy(),
    consistent=_exists_agrees,
)
