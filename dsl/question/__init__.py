"""Question accounting: every span of a question, read against the catalog.

`read_question` returns a `Reading`: the pieces (query-type cue, entity,
field, value, id, number, date range, comparison, negation, absence, sort,
limit, label cue, function word), the conditions they state, and the
`problems` (the residual): content no plan built from the catalog carries.
The rule planner plans from a reading; the verifier's `question_covered`
checks any plan against it. No database code: linked values arrive as a
`TenantValues` mapping.
"""

from __future__ import annotations

from qdsl.dsl.question.feedback import problem_sentence, problems_text
from qdsl.dsl.question.model import Condition, Kind, Piece, Problem, Reading, Sense
from qdsl.dsl.question.reader import read_question

__all__ = [
    "Condition",
    "Kind",
    "Piece",
    "Problem",
    "Reading",
    "Sense",
    "problem_sentence",
    "problems_text",
    "read_question",
]
