"""The keys of `Answer.data` per answer contract (SPEC 6), the same in every language."""

from __future__ import annotations

from qdsl.dsl.ir import AnswerContract

DATA_KEYS: dict[AnswerContract, frozenset[str]] = {
    AnswerContract.YES_NO_WITH_EVIDENCE: frozenset({"exists", "matches"}),
    AnswerContract.COUNT_SCALAR: frozenset({"count"}),
    AnswerContract.ENTITY_LIST: frozenset({"items", "total", "truncated"}),
    AnswerContract.ENTITY_SNAPSHOT: frozenset({"entity"}),
    AnswerContract.EXPLANATION_WITH_CITATIONS: frozenset({"passages", "citations"}),
    AnswerContract.DIAGNOSIS_WITH_EVIDENCE: frozenset({"findings"}),
    AnswerContract.COMPARISON_WITH_BASIS: frozenset({"subjects", "differences"}),
    AnswerContract.CLARIFY_OR_FAIL: frozenset({"clarification"}),
}

# Contracts whose positive answer is a claim about stored data and so must cite.
MUST_CITE: frozenset[AnswerContract] = frozenset(
    {
        AnswerContract.YES_NO_WITH_EVIDENCE,
        AnswerContract.ENTITY_SNAPSHOT,
        AnswerContract.EXPLANATION_WITH_CITATIONS,
        AnswerContract.DIAGNOSIS_WITH_EVIDENCE,
        AnswerContract.COMPARISON_WITH_BASIS,
    }
)
