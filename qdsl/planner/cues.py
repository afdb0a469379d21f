"""Query-type cues: which kind of answer the wording asks for.

The cue words live with the question reader (`qdsl.dsl.question.words`), so the
verifier reads a question's query type exactly as the planner does.
"""

from __future__ import annotations

from qdsl.dsl.ir import QueryType
from qdsl.dsl.question.words import COMPILED_CUES
from qdsl.dsl.textnorm import normalize_text


def classify(question: str) -> QueryType | None:
    """The query type the wording asks for, or None when no cue is present."""
    text = normalize_text(question)
    for qt, patterns in COMPILED_CUES:
        if any(p.search(text) for p in patterns):
            return qt
    return None
