"""Query-type cues: which kind of answer the wording asks for.

Each query kind's record owns its cue words (`QueryKind.cues`, `dsl.kinds`);
the question reader takes them in rank order (`qdsl.dsl.question.words.CUES`),
so the verifier reads a question's query type exactly as the planner does.
"""

from __future__ import annotations

from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import KindTable
from qdsl.dsl.question.words import COMPILED_CUES, CUES
from qdsl.dsl.textnorm import normalize_text

# The cues registered per query type: every executable kind has wording that
# asks for it (tests/test_query_kinds.py); CUES keeps their order.
CUES_BY_KIND: KindTable[tuple[str, ...]] = KindTable("planner cues", needs=lambda k: k.executable)
for _qt, _patterns in CUES:
    CUES_BY_KIND.add(_qt, _patterns)


def classify(question: str) -> QueryType | None:
    """The query type the wording asks for, or None when no cue is present."""
    text = normalize_text(question)
    for qt, patterns in COMPILED_CUES:
        if any(p.search(text) for p in patterns):
            return qt
    return None
