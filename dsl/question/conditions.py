"""Conditions from pieces: the per-field rules a reading applies (values, numbers,
dates, absence), each turning pieces of the question into `Condition`s or a
`Problem` naming what could not be placed.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec, FieldType
from qdsl.dsl.ir import Operator, QueryType, Value
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.question.model import Condition, Kind, Piece, Problem, ProblemReason, Sense
from qdsl.dsl.question.related import related_spec
from qdsl.dsl.question.target import sense_for

_TIME = (FieldType.DATE, FieldType.DATETIME)
# What parts two conditions: a field on the other side of one belongs to the other.
_SEPARATOR = re.compile(r"[、,，;；]|且|\band\b|\bwith\b")


class Builder:
    def __init__(
        self,
        catalog: Catalog,
        text: str,
        pieces: list[Piece],
        now: datetime,
        lang: str,
        *,
        stems: frozenset[str] = frozenset(),
    ) -> None:
        self.catalog, self.text, self.pieces, self.now, self.lang = catalog, text, pieces, now, lang
        self.stems = stems
        self.problems: list[Problem] = []
        self.conditions: list[Condition] = []
        self.used: set[int] = set()  # indexes of pieces consumed

    # -- helpers -----------------------------------------------------------
    def ent(self, main: str) -> EntitySpec:
        return self.catalog.entities[main]

    def gap(self, a: Piece, b: Piece) -> str:
        """The text between two pieces."""
        return self.text[a.end : b.start]

    def near(self, i: int, kinds: tuple[Kind, ...], *, span: int = 3) -> list[int]:
        """Indexes of pieces of `kinds` within `span` content pieces of i, nearest first."""
        order = sorted(range(len(self.pieces)), key=lambda j: (abs(j - i), j > i))
        return [j for j in order if j != i and abs(j - i) <= span and self.pieces[j].kind in kinds]

    def problem(
        self, text: str, reason: ProblemReason, could: tuple[str, ...] = (), detail: str = ""
    ) -> None:
        self.problems.append(Problem(text, reason, could, detail))

    def could(
        self, main: str | None, types: tuple[FieldType, ...] | None = None
    ) -> tuple[str, ...]:
        if main is None:
            return tuple(self.catalog.entities)
        out: list[str] = []
        for name, f in self.ent(main).fields.items():
            if f.sensitive or (types is not None and f.type not in types):
                continue
            vals = list(dict.fromkeys((*f.values, *f.aliases)))[:3]
            if f.type is FieldType.BOOL:
                vals = ["true", "false"]
            if types is None and not vals and not f.link_values:
                continue
            out.append(f"{name} ({', '.join(vals)})" if vals else name)
        if types is None:
            out.append(f"{self.ent(main).label} (contains)")
        return tuple(out[:6])

    def add(
        self, field: str, op: Operator, value: Value, text: str, *, textual: bool = False
    ) -> None:
        self.conditions.append(Condition(field, op, value, text, textual))

    # -- conditions ----------------------------------------------------------
    def values(self, main: str, items: list[tuple[Sense, bool, str]]) -> None:
        """Value and linked-value senses of `main`, grouped per field and polarity."""
        grouped: dict[tuple[str, bool], list[tuple[str, str]]] = {}
        for sense, negated, text in items:
            assert sense.field is not None and sense.value is not None
            grouped.setdefault((sense.field, negated), []).append((sense.value, text))
        for (fname, negated), vals in grouped.items():
            ent = self.ent(main)
            # a linked label is the implicit label's (`filter_spec`), not a field's
            spec = ent.fields.get(fname) or ent.filter_spec(fname)
            spec = spec or related_spec(self.catalog, ent, fname)
            assert spec is not None, fname
            values = list(dict.fromkeys(v for v, _ in vals))
            if spec.type is FieldType.BOOL:  # a related yes/no field ("有退款的")
                self.add(fname, Operator.EQUALS, (values[0] == "true") != negated, words_of(vals))
                continue
            words = "、".join(dict.fromkeys(t for _, t in vals))
            op = _value_operator(spec, negated, len(values))
            if op is None:
                allowed = ", ".join(o.value for o in spec.operators)
                how = "excluded" if negated else "matched"
                self.problem(words, "not_allowed", (f"{fname} ({allowed})",), how)
                continue
            value: Value = tuple(values) if op in (Operator.IN, Operator.NOT_IN) else values[0]
            self.add(fname, op, value, words)

    def number_field(self, main: str, i: int) -> str | None:
        for j in self.near(i, (Kind.FIELD,), span=4):
            s = sense_for(self.pieces[j], main, None)
            if s is not None and s.kind is Kind.FIELD and s.field:
                spec = self.ent(main).fields[s.field]
                if spec.type is FieldType.NUMBER:
                    self.used.add(j)
                    return s.field
        nums = [
            n
            for n, f in self.ent(main).fields.items()
            if f.type is FieldType.NUMBER and not f.sensitive
        ]
        return nums[0] if len(nums) == 1 else None

    def time_field(self, main: str, i: int) -> str | None:
        """The date field the date at pieces[i] is about: the name of a date field no
        earlier date took ("今年入职、去年创建的"), not split from the date by a
        separator ("没有巡检时间、本周签署的" is signed this week), nearest, on a tie
        the one before it ("创建时间在去年")."""
        named: list[tuple[bool, bool, int, bool, int, str]] = []
        date = self.pieces[i]
        for j, p in enumerate(self.pieces):
            s = sense_for(p, main, None) if p.kind is Kind.FIELD else None
            if s is not None and s.field and self.ent(main).fields[s.field].type in _TIME:
                between = self.gap(p, date) if j < i else self.gap(date, p)
                split = _SEPARATOR.search(between) is not None
                named.append((j in self.used, split, abs(j - i), j > i, j, s.field))
        if named:
            *_, j, field = min(named)
            self.used.add(j)
            return field
        dates = [n for n, f in self.ent(main).fields.items() if f.type in _TIME and not f.sensitive]
        return dates[0] if len(dates) == 1 else None

    def comparison(self, main: str, i: int, op: str, n: float, words: str) -> None:
        field = self.number_field(main, i)
        if field is None:
            self.problem(words, "unplaced", self.could(main, (FieldType.NUMBER,)), "number")
            return
        spec = self.ent(main).fields[field]
        ops = {"gt": Operator.GT, "gte": Operator.GTE, "lt": Operator.LT, "lte": Operator.LTE}
        operator = ops.get(op, Operator.EQUALS)
        if operator not in spec.operators:
            self.problem(
                words, "not_allowed", (f"{field} ({', '.join(o.value for o in spec.operators)})",)
            )
            return
        self.add(field, operator, _num(n), words)

    def dates(self, main: str, i: int, p: Piece) -> None:
        field = self.time_field(main, i)
        if field is None:
            self.problem(p.text, "unplaced", self.could(main, _TIME), "date")
            return
        spec = self.ent(main).fields[field]
        low, high = window(p, spec.type is FieldType.DATE)
        for bound in (low, high):
            if bound is None:
                continue
            op = next((o for o, _ in bound if o in spec.operators), None)
            if op is None:
                self.problem(p.text, "not_allowed", (field,))
                return
            self.add(field, op, dict(bound)[op], p.text)


Bound = tuple[tuple[Operator, str], ...]


def window(p: Piece, date_only: bool) -> tuple[Bound | None, Bound | None]:
    """A date piece's ends as plan values, each with the operators that state it
    (the first the field allows is used).

    A period is [since, until). A window ending now is the N units up to now, now
    included: on a DATE field whole days, the day after `since`'s through today
    (`< tomorrow`, or `<= today`); on a datetime field the instants from `since`
    through now (`<= now`, or `< now` where `<=` is not allowed)."""
    day = timedelta(days=1)

    def iso(d: datetime) -> str:
        return d.date().isoformat() if date_only else d.isoformat()

    low: Bound | None = None
    high: Bound | None = None
    since, until = p.since, p.until
    if p.ends_now and since is not None and until is not None:
        if date_only:
            low = ((Operator.GTE, (since.date() + day).isoformat()),)
            tomorrow, today = until.date() + day, until.date()
            high = ((Operator.LT, tomorrow.isoformat()), (Operator.LTE, today.isoformat()))
        else:
            low = ((Operator.GTE, since.isoformat()),)
            high = ((Operator.LTE, until.isoformat()), (Operator.LT, until.isoformat()))
        return low, high
    if since is not None:
        low = ((Operator.GTE, iso(since)),)
    if until is not None:
        high = ((Operator.LT, iso(until)),)
        if date_only:  # the last day of the period, on a field of whole days
            high += ((Operator.LTE, iso(until - day)),)
    return low, high


def words_of(vals: list[tuple[str, str]]) -> str:
    return "、".join(dict.fromkeys(t for _, t in vals))


def _num(n: float) -> int | float:
    return int(n) if float(n).is_integer() else n


def _value_operator(spec: FieldSpec, negated: bool, count: int) -> Operator | None:
    ops = spec.operators
    if negated:
        for op in (Operator.NOT_EQUALS, Operator.NOT_IN) if count == 1 else (Operator.NOT_IN,):
            if op in ops:
                return op
        return None
    if count > 1:
        return Operator.IN if Operator.IN in ops else None
    if spec.is_fact and Operator.EQUALS_OR_ALIAS in ops:
        return Operator.EQUALS_OR_ALIAS
    for op in (Operator.EQUALS, Operator.EQUALS_OR_ALIAS, Operator.IN):
        if op in ops:
            return op
    return None


def text_field(ent: EntitySpec) -> tuple[str, bool] | None:
    """Where unknown words are searched as text: a fact field allowing `contains`
    (facts, then the text fallback), else the label. (field, through fallback)."""
    for name, f in ent.fields.items():
        if f.is_fact and Operator.CONTAINS in f.operators and not f.sensitive:
            return name, True
    label = ent.filter_spec(ent.label)
    if label is not None and Operator.CONTAINS in label.operators:
        return ent.label, False
    return None


def between(r: Builder, main: str, i: int, a: Piece, b: Piece) -> None:
    field = r.number_field(main, i)
    words = f"{a.text} … {b.text}"
    if field is None:
        r.problem(words, "unplaced", r.could(main, (FieldType.NUMBER,)), "number")
        return
    spec = r.ent(main).fields[field]
    if Operator.BETWEEN not in spec.operators:
        r.problem(words, "not_allowed", (field,))
        return
    lo, hi = sorted((a.number or 0, b.number or 0))
    r.add(field, Operator.BETWEEN, (_num(lo), _num(hi)), words)


def sort_field(r: Builder, main: str, i: int, p: Piece) -> str | None:
    ent = r.ent(main)
    for j in r.near(i, (Kind.FIELD,), span=4):
        s = sense_for(r.pieces[j], main, None)
        if s is not None and s.field in ent.sorts:
            spec = ent.fields.get(s.field or "")
            wanted = _TIME if p.entity == "time" else (FieldType.NUMBER,)
            if spec is None or spec.type in wanted:
                r.used.add(j)
                return s.field
    if p.entity == "time":
        if ent.default_sort is not None:
            return ent.default_sort[0]
        times = [s for s in ent.sorts if (f := ent.fields.get(s)) is not None and f.type in _TIME]
        return times[0] if len(times) == 1 else None
    return None


def adjust_query_type(
    r: Builder,
    qt: QueryType | None,
    main: str,
    *,
    pointed: bool,
    projection: list[str],
    ranked: bool = False,
    one_id: bool = False,
) -> QueryType | None:
    ent = r.ent(main)
    # "项目 64 的预算是多少", "What is the priority of ticket TCK-7?", "Which team is
    # agent AG-3 in?": an attribute of one object.
    asking = qt is None or kind_of(qt).policy.attribute_cue
    if pointed and projection and (asking or (qt is QueryType.LIST and one_id)):
        return QueryType.STATUS
    if qt is QueryType.EXPLAIN and pointed and QueryType.EXPLAIN not in ent.default_for:
        return QueryType.STATUS
    # "What is the newest project?", "预算最高的 3 个项目": a ranking is a list.
    if ranked and (qt is None or (qt is QueryType.EXPLAIN and qt not in ent.query_types)):
        return QueryType.LIST
    return qt
