"""Words that ask for more than a list, a count or a snapshot.

"total", "合计", "平均", "how much" ask for a sum or an average; "each", "per",
"每个", "各", "分别", "breakdown" and 按 / "by" before a field in a question that
counts or sums ask for one answer per group. The plan language states neither
yet, so each such word becomes a `Problem` (reason `unsupported`) naming what
cannot be answered, in the question's language: the rule planner then clarifies,
and `question_covered` refuses any plan (an LLM's list or count) for the question.

A word is harmless only where it asks nothing more:
* "每个项目的状态", "every project", "each ticket's status": the per-word stands
  right before the asked entity's own name, in a question that neither counts nor
  sums: every one of those objects, a list;
* "项目 64 和 65 的预算分别是多少": "respectively" over objects named by id;
* "项目 64 的预算是多少钱", "How much is the budget of project 64?": "how much"
  asking one object's attribute;
* 按 / "by" before a field in a question that neither counts nor sums, or next to
  a sort word (排序, "sorted by"): a sort ("List the top 3 projects by budget").
"by" before anything but a field is a preposition: "by phone" leads a value,
"created by Alice" a name the catalog links or the reader leaves unplaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.dsl.ir import QueryType
from qdsl.dsl.question.conditions import Builder
from qdsl.dsl.question.model import Piece
from qdsl.dsl.question.words import SORT_WORDS

_MEASURES = frozenset({"sum", "average"})


@dataclass
class Asked:
    """The aggregate words of one question and the fields 按 / "by" lead to."""

    words: list[int] = field(default_factory=list)  # indexes of aggregate pieces
    # (index of the 按 / "by" piece, the field after it or None)
    groupings: list[tuple[int, str | None]] = field(default_factory=list)


@dataclass(frozen=True)
class Placed:
    sorts: tuple[str, ...]  # the 按 / "by" fields that sort the answer
    every: bool  # a per-word means every one of the asked objects
    refused: bool  # some word asked for what cannot be answered


def place(
    b: Builder,
    main: str,
    asked: Asked,
    *,
    qt: QueryType | None,
    named_by: Piece | None,
    ids: int,
    attribute: bool,
) -> Placed:
    """Problems for the words that ask more than the plan can state; what is left."""
    pieces = b.pieces
    kinds = {pieces[i].op for i in asked.words}
    summing = bool(kinds & _MEASURES) or ("amount" in kinds and not attribute)
    counting = summing or qt is QueryType.COUNT
    numbers = b.could(main, (FieldType.NUMBER,))
    refused = False
    every = False
    for i in asked.words:
        p = pieces[i]
        if p.op in _MEASURES or (p.op == "amount" and not attribute):
            detail = "average" if p.op == "average" else "sum"
            b.problem(p.text, "unsupported", numbers, detail)
            refused = True
        elif p.op == "per" and not counting and _before(b, i, named_by):
            every = True
        elif p.op == "respectively" and ids >= 2:
            continue
        elif p.op != "amount":
            b.problem(p.text, "unsupported", (), "breakdown")
            refused = True
    sorts: list[str] = []
    grouping = counting or refused
    for i, fname in asked.groupings:
        p = pieces[i]
        if grouping and not SORT_WORDS.search(b.text):
            words = p.text if fname is None else b.text[p.start : pieces[i + 1].end]
            b.problem(words, "unsupported", (fname,) if fname else (), "grouping")
            refused = True
        elif fname is not None:
            sorts.append(fname)
    return Placed(tuple(sorts), every, refused)


def _before(b: Builder, i: int, named_by: Piece | None) -> bool:
    """The per-word stands right before the asked entity's own name."""
    nxt = b.pieces[i + 1] if i + 1 < len(b.pieces) else None
    return nxt is not None and nxt is named_by and not b.gap(b.pieces[i], nxt).strip()


def need_measure(
    b: Builder, ent: EntitySpec, fields: list[str], aggregation: str, qt: QueryType | None
) -> None:
    """A measure kind's question names one number field, which allows `aggregation`
    in the catalog when the kind needs one ("sum"); else the question is unplaced."""
    spec = ent.fields.get(fields[0]) if len(fields) == 1 else None
    if (
        spec is None
        or spec.type is not FieldType.NUMBER
        or (aggregation and aggregation not in spec.aggregations)
    ):
        # a sum word with nothing to sum asks for what cannot be answered, as before
        if aggregation:
            b.problem(b.text, "unsupported", (), aggregation)
        else:
            b.problem(b.text, "unplaced", (), qt.value if qt is not None else "measure")
