"""Whether a question asks for a measure: a sum, an average, a count of distinct
values, the highest or lowest value of a field, or a measure the catalog declares.

Decided before the entity is chosen (an aggregate's entity is the one owning the
field or measure named) from the pieces alone; the walk then reads which
function over which field (`measures.py`). A question asking for objects keeps
its kind: "有没有总预算超过 100 万的项目" asks for projects, "how many projects
have a total above …" for a count, "who has the highest salary" / "哪个员工工资最高"
for the holder of the highest value. Those measure words stay refused, never
answered beside the question.
"""

from __future__ import annotations

from collections.abc import Sequence

from qdsl.dsl.ir import QueryType
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.words import HOLDER_ASKED, VALUE_ASKED_EN, VALUE_ASKED_ZH

# what the measure words ask, by the aggregate piece's op
FUNCTION_OF = {"sum": "sum", "average": "avg", "distinct": "count_distinct"}
# query types a measure question may be cued as ("What is …" reads as an explanation,
# "项目 64 和 65 的预算合计" as a status of the objects named, "按城市统计工资总和" as
# a breakdown: the grouping makes it one again, of the measure)
_YIELDING = frozenset(
    {QueryType.EXPLAIN, QueryType.STATUS, QueryType.AGGREGATE, QueryType.BREAKDOWN}
)


def is_measure_piece(p: Piece) -> bool:
    """A declared measure's words (a catalog piece of the aggregate kind)."""
    return p.kind is Kind.AGGREGATE and p.op is None and bool(p.senses)


def asked_query_type(qt: QueryType | None, pieces: Sequence[Piece], text: str) -> QueryType | None:
    """AGGREGATE when the question asks for a measure and its cue (if any) yields
    to one; else the cue's query type, unchanged."""
    words = [p for p in pieces if p.kind is Kind.AGGREGATE]
    distinct = any(p.op == "distinct" for p in words)
    asks = (
        distinct
        or any(p.op in FUNCTION_OF or is_measure_piece(p) for p in words)
        or value_superlative(pieces, text) is not None
    )
    if not asks:
        return qt
    if qt is None or qt in _YIELDING:
        return QueryType.AGGREGATE
    if qt is QueryType.COUNT and (distinct or _counts_nothing(pieces)):
        # "how many distinct cities"; "总预算是多少": 多少 asks a value, not a count
        return QueryType.AGGREGATE
    return qt


def _counts_nothing(pieces: Sequence[Piece]) -> bool:
    cues = [p for p in pieces if p.kind is Kind.CUE and p.query_type is QueryType.COUNT]
    return all(VALUE_ASKED_ZH.fullmatch(p.text.strip()) for p in cues)


def value_superlative(pieces: Sequence[Piece], text: str) -> Piece | None:
    """The superlative of a question asking the highest or lowest value itself
    ("what is the highest salary", "最高工资是多少"), or None."""
    if HOLDER_ASKED.search(text) or any(p.kind is Kind.LIMIT for p in pieces):
        return None
    for p in pieces:
        if p.kind is not Kind.SORT or p.entity != "amount" or p.op not in ("asc", "desc"):
            continue
        before = text[: p.start]
        if VALUE_ASKED_EN.search(before) or (
            not text.isascii() and VALUE_ASKED_ZH.search(text, p.end)
        ):
            return p
    return None
