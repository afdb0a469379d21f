"""Words that ask for more than a list, a count or a snapshot.

"total", "合计", "平均", "多少种", "distinct" and a declared measure's words ask for
a measure: in a question read as an aggregate (`functions.asked_query_type`)
they name its function (sum, avg, count_distinct) or the declared measure, over
the one field the question names, which the catalog must let that function
apply to. "each", "per", "每个", "各", "分别", "breakdown" and 按 / "by" before a
field in a question that counts or sums ask for one answer per group, which no
plan of these kinds states: each such word, and a measure word in a question
asking for objects or a count, becomes a `Problem` (reason `unsupported`) naming
what cannot be answered, in the question's language: the rule planner then
clarifies, and `question_covered` refuses any plan (an LLM's list or count) for
the question.

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
from qdsl.dsl.question.functions import FUNCTION_OF, is_measure_piece
from qdsl.dsl.question.model import Kind, Piece
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
    function: str | None = None  # the measure's function its words ask (sum, avg, ...)
    declared: str | None = None  # the declared measure its words name
    words: str = ""  # the words asking the function


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
    measuring = qt is QueryType.AGGREGATE
    summing = bool(kinds & _MEASURES) or ("amount" in kinds and not attribute) or measuring
    counting = summing or qt is QueryType.COUNT
    numbers = b.could(main, (FieldType.NUMBER,))
    refused = False
    every = False
    functions: list[str] = []
    declared: list[str] = []
    for i in asked.words:
        p = pieces[i]
        if is_measure_piece(p):
            refused |= not _declared(b, main, p, declared, measuring)
        elif measuring and p.op in FUNCTION_OF:
            functions.append(FUNCTION_OF[p.op or ""])
        elif measuring and p.op == "amount" and (functions or kinds & _MEASURES):
            continue  # "总预算是多少钱": the sum word says what the amount is
        elif p.op in _MEASURES or (p.op == "amount" and not attribute) or p.op == "distinct":
            detail = {"average": "average", "distinct": "count_distinct"}.get(p.op or "", "sum")
            b.problem(p.text, "unsupported", numbers, detail)
            refused = True
        elif p.op == "per" and not counting and _before(b, i, named_by):
            every = True
        elif p.op == "respectively" and ids >= 2:
            continue
        elif p.op != "amount":
            b.problem(p.text, "unsupported", (), "breakdown")
            refused = True
    if len(set(functions)) > 1 or (functions and declared):
        b.problem(b.text, "ambiguous", tuple(dict.fromkeys([*functions, *declared])), "measure")
        refused = True
    sorts, grouped = _groupings(b, asked, grouping=counting or refused)
    function = functions[0] if functions else None
    first = declared[0] if declared else None
    said = next((pieces[i].text for i in asked.words if pieces[i].op in FUNCTION_OF), "")
    return Placed(sorts, every, refused or grouped, function, first, said)


def _groupings(b: Builder, asked: Asked, *, grouping: bool) -> tuple[tuple[str, ...], bool]:
    """The 按 / "by" fields that sort the answer, and whether one asked for groups."""
    sorts: list[str] = []
    refused = False
    for i, fname in asked.groupings:
        p = b.pieces[i]
        if grouping and not SORT_WORDS.search(b.text):
            words = p.text if fname is None else b.text[p.start : b.pieces[i + 1].end]
            b.problem(words, "unsupported", (fname,) if fname else (), "grouping")
            refused = True
        elif fname is not None:
            sorts.append(fname)
    return tuple(sorts), refused


def _declared(b: Builder, main: str, p: Piece, declared: list[str], measuring: bool) -> bool:
    """A declared measure's words: the measure, when it is the asked entity's and the
    question asks a measure; else a problem."""
    own = [s.value for s in p.senses if s.kind is Kind.AGGREGATE and s.entity == main and s.value]
    if measuring and own:
        declared.append(own[0])
        return True
    names = tuple(f"{s.entity}.{s.value}" for s in p.senses if s.kind is Kind.AGGREGATE)
    b.problem(p.text, "unsupported", names, "measure")
    return False


def _before(b: Builder, i: int, named_by: Piece | None) -> bool:
    """The per-word stands right before the asked entity's own name."""
    nxt = b.pieces[i + 1] if i + 1 < len(b.pieces) else None
    return nxt is not None and nxt is named_by and not b.gap(b.pieces[i], nxt).strip()


def need_measure(
    b: Builder,
    ent: EntitySpec,
    fields: list[str],
    function: str,
    qt: QueryType | None,
    *,
    declared: str | None = None,
    words: str = "",
) -> None:
    """A measure kind's question names one field whose catalog aggregations allow
    `function`, or a declared measure alone; else it is asked about, never guessed."""
    if declared is not None:
        # "the average payment amount": the measure's own field may be named with it
        others = [f for f in fields if f != ent.measures[declared].field]
        if others:
            b.problem(", ".join(others), "unplaced", (declared,), "field")
        return
    spec = ent.fields.get(fields[0]) if len(fields) == 1 else None
    if function and (spec is None or spec.sensitive or function not in spec.aggregations):
        # a measure word with nothing it may apply to asks what cannot be answered
        could = tuple(n for n, f in ent.fields.items() if function in f.aggregations)
        if function != "count_distinct":
            could = could or b.could(ent.name, (FieldType.NUMBER,))
        detail = "average" if function == "avg" else function
        b.problem(words or b.text, "unsupported", could, detail)
    elif not function and (spec is None or spec.type is not FieldType.NUMBER):
        b.problem(b.text, "unplaced", (), qt.value if qt is not None else "measure")
