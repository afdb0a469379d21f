"""Words that ask for more than a list, a count or a snapshot.

"total", "合计", "平均", "多少种", "distinct" and a declared measure's words ask for
a measure: in a question read as an aggregate (`functions.asked_query_type`)
they name its function (sum, avg, count_distinct) or the declared measure, over
the one field the question names, which the catalog must let that function
apply to. "each", "per", "每个", "各", "分别", "breakdown" and 按 / "by" before a
field in a question that counts or sums ask for one answer per group. A count
per group is a breakdown: the field after the per-word or 按 / "by" (or the
period of 每月, "monthly", `dsl.question.grouping`) is what it groups by
(`Placed.groups`); a measure per group ("total paid per method", "各部门的平均工资")
is a breakdown computing that measure. A measure word in a question asking for
objects or a count, and a per-word that leads to nothing a breakdown can group
by, becomes a `Problem` (reason `unsupported`) naming what cannot be answered,
in the question's language: the rule planner then clarifies, and
`question_covered` refuses any plan (an LLM's list or count) for the question.

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
from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import QueryType
from qdsl.dsl.question import grouping as G
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
    # index of a per-word (每个, 各, "per") -> the field right after it
    per_fields: dict[int, str] = field(default_factory=dict)
    # where the period words stand that a per-word or 按 / "by" took
    taken: set[int] = field(default_factory=set)
    # the groupings across relations the per-words and 按 / "by" lead to
    related: set[str] = field(default_factory=set)
    # a measure ranked over a related entity groups by the path to it (`ranked_groups`)
    ranked: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Placed:
    sorts: tuple[str, ...]  # the 按 / "by" fields that sort the answer
    every: bool  # a per-word means every one of the asked objects
    refused: bool  # some word asked for what cannot be answered
    function: str | None = None  # the measure's function its words ask (sum, avg, ...)
    declared: str | None = None  # the declared measure its words name
    words: str = ""  # the words asking the function
    groups: tuple[tuple[str, Grain | None], ...] = ()  # what a count is broken down by
    periods: tuple[tuple[int, int], ...] = ()  # where the period words stand


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
    counting = summing or qt in (QueryType.COUNT, QueryType.BREAKDOWN)
    # a count or a measure per group is a breakdown
    grouped = counting
    ent = b.ent(main)
    spans = G.periods(b.text) if grouped else []
    numbers = b.could(main, (FieldType.NUMBER,))
    refused = False
    every = False
    groups: list[G.Key] = [(f, None) for f in asked.ranked] if grouped else []
    functions: list[str] = []
    declared: list[str] = []
    for i in asked.words:
        p = pieces[i]
        leads = p.op in ("per", "group")
        key = _per_key(b, ent, asked, i, spans) if grouped and leads else None
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
        elif key is not None:
            groups.append(key)
        elif grouped and p.op in ("respectively", "group"):
            continue  # "分别", "breakdown": the grouping is named elsewhere, or asked for below
        elif p.op != "amount":
            b.problem(p.text, "unsupported", (), "breakdown")
            refused = True
    if len(set(functions)) > 1 or (functions and declared):
        b.problem(b.text, "ambiguous", tuple(dict.fromkeys([*functions, *declared])), "measure")
        refused = True
    sorts, cut = _by_fields(
        b, ent, asked, spans, groups, grouped=grouped, refusing=counting or refused
    )
    refused = refused or cut
    loose = _loose_periods(b, ent, asked, spans)
    refused = refused or None in loose
    groups.extend(k for k in loose if k is not None)
    used = tuple((p.start, p.end) for p in spans)
    said = next((pieces[i].text for i in asked.words if pieces[i].op in FUNCTION_OF), "")
    return Placed(
        tuple(sorts),
        every,
        refused,
        functions[0] if functions else None,
        declared[0] if declared else None,
        said,
        tuple(dict.fromkeys(groups)),
        used,
    )


def _by_fields(
    b: Builder,
    ent: EntitySpec,
    asked: Asked,
    spans: list[G.Period],
    groups: list[G.Key],
    *,
    grouped: bool,
    refusing: bool,
) -> tuple[list[str], bool]:
    """按 / "by" before a field: a grouping of a count (into `groups`), a sort, or a
    problem; the sorts and whether anything was refused."""
    pieces = b.pieces
    sorted_ = bool(SORT_WORDS.search(b.text))
    sorts: list[str] = []
    refused = False
    for i, fname in asked.groupings:
        p = pieces[i]
        key = G.field_key(ent, fname, asked.related) if grouped and not sorted_ else None
        if key is None and grouped and not sorted_ and fname is None:
            key = _period_at(b, ent, p.end, spans)
        if key is not None:
            groups.append(key)
        elif refusing and not sorted_:
            words = p.text if fname is None else b.text[p.start : pieces[i + 1].end]
            b.problem(words, "unsupported", (fname,) if fname else (), "grouping")
            refused = True
        elif fname is not None:
            sorts.append(fname)
    return sorts, refused


def _loose_periods(
    b: Builder, ent: EntitySpec, asked: Asked, spans: list[G.Period]
) -> list[G.Key | None]:
    """ "monthly", "每月" where no per-word or 按 / "by" piece stood for the period."""
    return [
        G.period_key(b, ent, span)
        for span in spans
        if span.start not in asked.taken and not span.text.startswith(("per", "by", "按", "各"))
    ]


def _per_key(
    b: Builder, ent: EntitySpec, asked: Asked, i: int, spans: list[G.Period]
) -> G.Key | None:
    """The grouping a per-word leads to: the field after it, or the period it starts."""
    key = G.field_key(ent, asked.per_fields.get(i), asked.related)
    return key if key is not None else _period_at(b, ent, b.pieces[i].start, spans, asked)


def _period_at(
    b: Builder,
    ent: EntitySpec,
    at: int,
    spans: list[G.Period],
    asked: Asked | None = None,
) -> G.Key | None:
    for span in spans:
        if span.start == at or (span.start < at <= span.end):
            if asked is not None:
                asked.taken.add(span.start)
            return G.period_key(b, ent, span)
    return None


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
        m = ent.measures[declared]
        others = [f for f in fields if f not in (m.field, m.times)]
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
