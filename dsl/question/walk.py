"""The walk over a question's pieces, in order: each kind of piece has its handler.

State that spans pieces (a pending negation, values to group per field, the
fields named, sort and limit) lives on the walk; `finish` turns it into a
`Reading`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from qdsl.dsl.ir import Operator, QueryType, SortDirection
from qdsl.dsl.kinds import PlannerPolicy, kind_of
from qdsl.dsl.question import flags, measures, related
from qdsl.dsl.question.conditions import (
    Builder,
    adjust_query_type,
    sort_field,
)
from qdsl.dsl.question.model import Condition, Kind, Piece, Reading, Sense
from qdsl.dsl.question.number_pieces import NumberPieces
from qdsl.dsl.question.target import entity_senses, sense_for
from qdsl.dsl.question.words import ASCENDING, DESCENDING, STANDALONE_PRONOUNS

# what the reader does when no query-type cue was found
_NO_POLICY = PlannerPolicy()

_PLURAL_CUES = frozenset({"哪些", "有哪些", "列出", "list", "list all"})
_PRONOUN_BEFORE_ENTITY = re.compile(r"(?:这个|该|此|那个|这|\bthis|\bthat|\bthese)\s*$")
# A value as the last word after an auxiliary ("did Contoso open?") may be a verb.
_VERB_SLOT = re.compile(r"\b(?:did|do|does|will|would|can|could|should|have|has|had)\b")
# Words after which a last value is a value, not a verb ("by email", "the status pending").
_LEADS = frozenset(
    ["by", "via", "through", "with", "as", "to", "from", "in", "on", "is", "are", "be", "of"]
)


def _naming_piece(pieces: list[Piece], main: str) -> Piece | None:
    """The piece that names the asked entity outright (else one naming only it):
    in "不是告警的信号", 信号 names the signals, 告警 is a value."""
    for p in pieces:
        pure = all(s.kind is Kind.ENTITY for s in p.senses)
        if p.kind is Kind.ENTITY and pure and main in entity_senses(p):
            return p
    for p in pieces:
        if p.kind is Kind.ENTITY and main in entity_senses(p):
            return p
    for p in pieces:
        own = any(s.entity == main and s.kind is not Kind.ENTITY for s in p.senses)
        if main in entity_senses(p) and not own:
            return p
    return None


class Walk(NumberPieces):
    def __init__(
        self, b: Builder, qt: QueryType | None, main: str, named: bool, display: str
    ) -> None:
        self.b, self.qt, self.main, self.named, self.display = b, qt, main, named, display
        self.ent = b.ent(main)
        self.pieces = b.pieces
        self.named_by = _naming_piece(self.pieces, main)
        self.ids: list[str] = []
        self.ref_ids: dict[str, list[str]] = {}
        self.values: list[tuple[Sense, bool, str]] = []
        self.fields: list[tuple[int, str]] = []
        self.sort: list[tuple[str, SortDirection]] = []
        self.limit: int | None = None
        self.pronoun = False
        self.negate: int | None = None  # index of a pending negation
        self.residuals: list[str] = []
        self.text_terms: list[str] = []
        self.singular = True
        self.top = False  # "top 3": a ranking that needs a field
        self.flags: list[flags.Mention] = []  # words of yes/no fields
        self.asked = measures.Asked()  # sums, averages, groupings asked for
        self.related_named: list[tuple[str, str]] = []  # related entity words (entity, text)
        self.handlers: dict[Kind, Callable[[int, Piece], None]] = {
            Kind.CUE: self.on_cue,
            Kind.ENTITY: self.on_catalog,
            Kind.FIELD: self.on_catalog,
            Kind.VALUE: self.on_catalog,
            Kind.LINKED: self.on_catalog,
            Kind.NEGATION: self.on_negation,
            Kind.ID: self.on_id,
            Kind.PRONOUN: self.on_pronoun,
            Kind.COMPARISON: self.on_comparison,
            Kind.NUMBER: self.on_number,
            Kind.DATE: self.on_date,
            Kind.ABSENCE: self.on_absence,
            Kind.PRESENCE: self.on_absence,
            Kind.SORT: self.on_sort,
            Kind.LIMIT: self.on_limit,
            Kind.LABEL_CUE: self.on_label_cue,
            Kind.RESIDUAL: self.on_residual,
            Kind.AGGREGATE: self.on_aggregate,
        }

    def run(self) -> Reading:
        self.rank_groups()
        for i, p in enumerate(self.pieces):
            if i not in self.b.used:
                handler = self.handlers.get(p.kind)
                if handler is not None:
                    handler(i, p)
        return self.finish()

    def on_cue(self, i: int, p: Piece) -> None:
        if p.text in _PLURAL_CUES:
            self.singular = False

    def on_catalog(self, i: int, p: Piece) -> None:
        if p.kind is Kind.ENTITY and p is self.named_by:
            if p.text.endswith("s") and p.text.isascii():
                self.singular = False
            if _PRONOUN_BEFORE_ENTITY.search(self.b.text[: p.start]):
                self.pronoun = True
            return
        s = sense_for(p, self.main, self.named_by)
        if s is None:
            self.elsewhere(p)
        elif s.kind is Kind.FIELD:
            self.on_field(i, s)
        elif s.kind is not Kind.ENTITY:
            own = [x for x in p.senses if x.entity == self.main and x.kind is s.kind]
            if p.kind is Kind.VALUE and self.verb_slot(i, p):
                # "How many tickets did Contoso open?": a verb, or the value open?
                self.b.problem(p.text, "ambiguous", (f"{s.field} ({s.value})",), "verb")
                return
            if len({x.field for x in own}) > 1:
                could = tuple(f"{x.field} ({x.value})" for x in own)
                self.b.problem(p.text, "ambiguous", could)
                return
            if flags.is_flag(self.ent.fields.get(s.field or "")):
                self.flag(i, s)
                return
            self.values.append((s, self.negate is not None, p.text))
            self.negate = None

    def verb_slot(self, i: int, p: Piece) -> bool:
        """A value as the last word after an auxiliary, not led by a preposition or its
        field's name: "did Contoso open?" (but "by email", "the status pending")."""
        if not _VERB_SLOT.search(self.b.text[: p.start]):
            return False
        if self.b.text[p.end :].strip(" ?？.!"):
            return False
        before = self.b.text[: p.start].split()
        prev = self.pieces[i - 1] if i > 0 else None
        if before and before[-1] in _LEADS:
            return False
        return prev is None or prev.kind is not Kind.FIELD

    def elsewhere(self, p: Piece) -> None:
        """A spelling that means nothing of the asked entity."""
        negated = self.negate is not None
        shown: list[str] = []
        # an explanation's words of another entity are its topic ("What is Harbor
        # Point's remote?"), never a condition across a relation
        topic = self.qt is not None and kind_of(self.qt).policy.text_fallback
        if not topic and related.absorb(
            self.b.catalog,
            self.main,
            p,
            negated=negated,
            values=self.values,
            named=self.related_named,
            shown=shown,
        ):
            self.fields.extend((self.pieces.index(p), f) for f in shown)
            self.negate = None if negated and self.values else self.negate
            return
        named = entity_senses(p)
        if named and any(q.kind is Kind.ID and q.entity in named for q in self.pieces):
            return  # "项目 64" in a question about tasks: the id carries it
        if p.text in self.b.stems:
            return  # another entity's date verb ("最早创建的任务"): the sort carries it
        if p.kind is Kind.ENTITY and named == [self.main]:
            return
        if self.qt is not None and kind_of(self.qt).policy.text_fallback and not self.named:
            self.residuals.append(self.display[p.start : p.end])  # part of the topic
            return
        why = related.unplaced(self.b.catalog, self.main, p)
        self.b.problem(why.text, why.reason, why.could, why.detail)

    def on_field(self, i: int, s: Sense) -> None:
        if flags.is_flag(self.ent.fields[s.field or ""]):
            self.flag(i, s)
            return
        ref = self.ent.fields[s.field or ""].references
        nxt = self.next_piece(i)
        if ref and nxt is not None and nxt.kind is Kind.ID and nxt.entity == ref:
            return  # "assigned to project 64": the id carries it
        if self.pieces[i].text in self.b.stems:
            return  # a date field's verb ("提交的工单") names no condition by itself
        self.fields.append((i, s.field or ""))

    def flag(self, i: int, s: Sense) -> None:
        """A word of a yes/no field: a state, the pending negation applied."""
        self.flags.append(flags.mention(i, self.pieces[i], s, self.negate is not None))
        self.negate = None

    def on_negation(self, i: int, p: Piece) -> None:
        if self.negate is not None:
            # the earlier negation found nothing to negate before this one
            self.b.problem(self.pieces[self.negate].text, "unplaced", (), "negation")
        self.negate = i

    def on_id(self, i: int, p: Piece) -> None:
        if p.entity != self.main:
            self.ref_ids.setdefault(p.entity or "", []).append(p.text)
        elif self.negate is None:
            self.ids.append(p.text)
        else:
            self.b.problem(p.text, "not_allowed", ("id",), "excluded")
        self.negate = None

    def on_pronoun(self, i: int, p: Piece) -> None:
        nxt = self.next_piece(i)
        if p.text in STANDALONE_PRONOUNS or (nxt is not None and nxt is self.named_by):
            self.pronoun = True

    def on_absence(self, i: int, p: Piece) -> None:
        self.unnegatable()
        s = sense_for(p, self.main, None)
        if s is None and related.absorb(
            self.b.catalog,
            self.main,
            p,
            negated=p.kind is Kind.ABSENCE,
            values=self.values,
            named=self.related_named,
        ):
            return  # "有退款的订单": a related yes/no field
        if s is not None and s.kind is Kind.ENTITY and p.kind is Kind.PRESENCE:
            return  # the asked entity named again: "compare project 64 with project 65"
        rows = related.named_rows(self.b.catalog, self.main, p) if s is None else None
        if rows is not None:  # "没有付款的订单": no related row at all
            self.b.add(rows, Operator.IS_NULL, p.kind is Kind.ABSENCE, p.text)
            return
        if s is None or s.field is None:
            self.b.problem(p.text, "unplaced", self.b.could(self.main, None))
            return
        spec = self.ent.fields[s.field]
        if flags.is_flag(spec):  # "没有远程办公的": the other state, not an unset field
            self.flag(i, s)
            return
        if Operator.IS_NULL not in spec.operators:
            allowed = ", ".join(o.value for o in spec.operators)
            self.b.problem(p.text, "not_allowed", (f"{s.field} ({allowed})",))
            return
        self.b.add(s.field, Operator.IS_NULL, p.kind is Kind.ABSENCE, p.text)

    def on_sort(self, i: int, p: Piece) -> None:
        if p.entity == "by":
            self.order_by(i)
            return
        field = sort_field(self.b, self.main, i, p)
        if field is None:
            self.b.problem(p.text, "unplaced", tuple(self.ent.sorts), "sort")
            return
        self.sort.append((field, SortDirection(p.op or "desc")))

    def sort_by(self, field: str, text: str) -> None:
        if field not in self.ent.sorts:
            self.b.problem(text, "unplaced", tuple(self.ent.sorts), "sort")
            return
        down = DESCENDING.search(self.b.text) and not ASCENDING.search(self.b.text)
        self.sort.append((field, SortDirection.DESC if down else SortDirection.ASC))

    def on_limit(self, i: int, p: Piece) -> None:
        self.limit = int(p.number or 0)
        self.top = self.top or p.text.startswith("top")

    def place_references(self) -> None:
        for ref, values in self.ref_ids.items():
            via = [n for n, f in self.ent.fields.items() if f.references == ref]
            if not via:
                self.b.problem(", ".join(values), "unplaced", (), "other_entity")
                continue
            op = Operator.EQUALS if len(values) == 1 else Operator.IN
            value = values[0] if len(values) == 1 else tuple(values)
            self.b.add(via[0], op, value, ", ".join(values))

    def place_flags_and_measures(self) -> measures.Placed:
        b, pointed = self.b, self.pointed()
        if flags.attribute_asked(self.qt, pointed):
            self.fields.extend((m.index, m.field) for m in self.flags)
        else:
            flags.place(b, self.main, self.flags)
        shown = any(j not in b.used for j, _ in self.fields)
        placed = measures.place(
            b,
            self.main,
            self.asked,
            qt=self.qt,
            named_by=self.named_by,
            ids=len(set(self.ids)),
            attribute=pointed and shown,
        )
        for i, field in self.asked.groupings:
            if field in placed.sorts:
                self.sort_by(field, self.pieces[i + 1].text)
        return placed

    def pointed(self) -> bool:
        """Whether the question points at one object: by id, by a pronoun, or by its
        label ("Alice Wang's salary"; when several objects bear it, the answer asks
        which one)."""
        label = self.ent.label
        named = any(
            s.kind is Kind.LINKED and s.field == label and not negated
            for s, negated, _ in self.values
        )
        return bool(self.ids) or self.pronoun or named

    def finish(self) -> Reading:
        b = self.b
        if self.negate is not None:
            b.problem(self.pieces[self.negate].text, "unplaced", (), "negation")
        b.values(self.main, self.values)
        related.settle_rows(b, self.main)
        shown = tuple(f for _, f in self.fields if related.SEPARATOR in f)
        related.check_named(b, self.main, self.related_named, shown)
        placed = self.place_flags_and_measures()
        self.place_references()
        stated = {c.field for c in b.conditions} | {f for f, _ in self.sort}
        # "电话渠道", "the status pending": a field named beside its own value.
        projection = [f for j, f in self.fields if j not in b.used and f not in stated]
        pointed = self.pointed()
        qt = adjust_query_type(
            b,
            self.qt,
            self.main,
            pointed=pointed,
            projection=projection,
            ranked=bool(self.sort or self.limit),
            one_id=len(set(self.ids)) == 1,
        )
        if placed.every and qt is None and projection and not pointed:
            qt = QueryType.LIST  # "每个项目的状态": every project, the field shown
        # "total paid per method": a breakdown computing the asked measure per group
        asked, (qt, group_by) = qt, self.grouped(qt, placed)
        measured = asked is QueryType.AGGREGATE and qt is QueryType.BREAKDOWN
        # "how many projects were created per quarter": the grouped field is named
        projection = [f for f in projection if f not in {g for g, _ in group_by}]
        if self.top and not self.sort:
            b.problem("top", "unplaced", tuple(self.ent.sorts), "sort")
        self.place_residuals(qt)
        kind = kind_of(qt) if qt is not None else None
        policy = kind.policy if kind is not None else _NO_POLICY
        need = kind.template.min_subjects if kind is not None and kind.template else 0
        if qt is not None and need > 1 and len(self.ids) < need:
            b.problem(b.text, "unplaced", (), qt.value)
        if qt is not None and policy.needs_subject and not pointed:
            b.problem(b.text, "unplaced", (), qt.value)
        if projection and not policy.shows_fields and not measured:
            for f in projection if not placed.refused else ():
                b.problem(f, "unplaced", (), "field")
            projection = []
        limit = self.limit
        sort = tuple(dict.fromkeys(self.sort))
        function: str | None = None
        if policy.measure or measured:
            projection, function = self.measure_of(placed, qt, sort, projection, per_group=measured)
            # (a breakdown keeps its limit: "the 3 methods with the highest total")
            sort, limit = (), limit if measured else None
        one = self.singular or policy.singular
        if sort and limit is None and one and (kind is None or kind.limited):
            limit = 1
            if policy.shows_ranked_field:
                # "谁的薪资最高": the answer states the value the object is highest in
                projection = [*projection, *(f for f, _ in sort if f not in projection)]
        ids = tuple(dict.fromkeys(self.ids))
        if ids:
            op = Operator.EQUALS if len(ids) == 1 else Operator.IN
            value = ids[0] if len(ids) == 1 else ids
            b.conditions.insert(0, Condition(self.ent.id, op, value, ", ".join(ids)))
        return Reading(
            question=self.display,
            text=b.text,
            language="zh" if b.lang == "zh" else "en",
            now=b.now,
            pieces=tuple(self.pieces),
            query_type=qt,
            entity=self.main,
            entity_named=self.named,
            ids=ids,
            conditions=tuple(b.conditions),
            sort=sort,
            limit=limit,
            projection=tuple(dict.fromkeys(projection)),
            group_by=group_by if qt is QueryType.BREAKDOWN else (),
            pronoun=self.pronoun,
            text_terms=tuple(self.text_terms),
            problems=tuple(b.problems),
            function=None if placed.declared else function,
            measure=placed.declared,
        )
