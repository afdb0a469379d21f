"""Pieces that stand for text rather than a field's value: a label condition
("called Verifier hardening", "名字里带 A股 的"), a text field's contents
("research in the title") and the unknown words left over, which become an
explanation's topic or a text search where the catalog allows one, or else a
problem. A part of the walk (`walk.Walk`), kept apart for size.
"""

from __future__ import annotations

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.ir import Operator, QueryType
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.question.conditions import Builder, text_field
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.related import SEPARATOR
from qdsl.dsl.question.words import RELATION_VERBS
from qdsl.dsl.textnorm import normalize_text

_QUOTES = " \"'“”「」"
# A cue that may also introduce a value the catalog knows.
_WEAK_CUES = frozenset({"about"})


class TextPieces:
    """The walk's handlers for label cues and residual words."""

    b: Builder
    main: str
    ent: EntitySpec
    display: str
    pieces: list[Piece]
    residuals: list[str]
    text_terms: list[str]

    def next_piece(self, i: int) -> Piece | None:
        return self.pieces[i + 1] if i + 1 < len(self.pieces) else None

    def on_label_cue(self, i: int, p: Piece) -> None:
        if p.op == "before":
            self.text_before(i, p)
            return
        nxt = self.next_piece(i)
        texty = (Kind.RESIDUAL, Kind.FIELD, Kind.VALUE, Kind.LINKED, Kind.NUMBER, Kind.ID)
        if nxt is None or nxt.kind not in texty or self.b.gap(p, nxt).strip(_QUOTES):
            return
        if p.text in _WEAK_CUES and nxt.kind is not Kind.RESIDUAL:
            return  # "about Hong Kong equities": the value that follows carries it
        # The text runs over the pieces that follow with nothing but spaces between
        # ("called Verifier hardening", "名字里带 A股 的").
        last = i + 1
        while last + 1 < len(self.pieces):
            q = self.pieces[last + 1]
            if q.kind not in texty or self.b.gap(self.pieces[last], q).strip(_QUOTES):
                break
            last += 1
        self.b.used.update(range(i + 1, last + 1))
        term = self.display[nxt.start : self.pieces[last].end]
        own = [s.field for s in p.senses if s.entity == self.main and s.field]
        field = own[0] if own else self.ent.label
        spec = self.ent.filter_spec(field)
        if spec is not None and Operator.CONTAINS in spec.operators:
            self.b.add(field, Operator.CONTAINS, normalize_text(term), term, textual=True)
        else:
            self.b.problem(term, "not_allowed", (field,))

    def text_before(self, i: int, p: Piece) -> None:
        """ "research in the title": the words before name the field's text."""
        prev = self.pieces[i - 1] if i > 0 else None
        if prev is None or prev.kind is not Kind.RESIDUAL or self.b.gap(prev, p).strip(_QUOTES):
            return
        if self.residuals and self.residuals[-1] == self.display[prev.start : prev.end]:
            self.residuals.pop()
        term = self.display[prev.start : prev.end]
        own = [s.field for s in p.senses if s.entity == self.main and s.field]
        if own:
            self.b.add(own[0], Operator.CONTAINS, normalize_text(term), term, textual=True)
        else:
            self.residuals.append(term)

    def on_residual(self, i: int, p: Piece) -> None:
        self.residuals.append(self.display[p.start : p.end])

    # -- the reading -------------------------------------------------------------
    def place_residuals(self, qt: QueryType | None) -> None:
        """Unknown words: an explanation's topic, or text where the catalog allows it."""
        where = text_field(self.ent)
        own = qt is not None and kind_of(qt).policy.residual_text
        textual = own or self.ent.text_fallback
        across = any(SEPARATOR in c.field for c in self.b.conditions)
        for term in self.residuals:
            if across and normalize_text(term) in RELATION_VERBS:
                continue  # "orders Felix Hoffmann placed": the related condition says it
            if textual and where is not None:
                self.b.add(where[0], Operator.CONTAINS, normalize_text(term), term, textual=True)
                self.text_terms.append(term)
            else:
                self.b.problem(term, "residual", self.b.could(self.main))
