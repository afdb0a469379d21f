"""Rows that tie at the top of a sorted plan.

"Who has the highest salary" is planned as one row; when several rows hold the
top value the answer names them all, its plan's limit their number. Both the
renderer (which writes them as a tie) and `question_covered` (which accepts that
limit for the one the question asked) hold them to this one test.
"""

from __future__ import annotations

from collections.abc import Sequence

from qdsl.dsl.ir import Plan
from qdsl.executor.result import ResultRow


def ties_read(plan: Plan, rows: Sequence[ResultRow]) -> bool:
    """Whether `rows` tie and the plan's limit is their number: each row holds the
    first row's value of the plan's one sort field."""
    if len(plan.sort) != 1 or len(rows) < 2 or plan.limit != len(rows):
        return False
    name = plan.sort[0].field
    top = rows[0].values.get(name)
    return top is not None and all(r.values.get(name) == top for r in rows)
