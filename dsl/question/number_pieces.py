"""The walk's handlers for numbers, comparisons and dates: a condition on a
number field ("预算超过 100 万", "between 3 and 5"), a count of objects to list
("the 3 most recent"), a date's period. A part of the walk (`walk.Walk`), kept
apart for size.
"""

from __future__ import annotations

from qdsl.dsl.catalog import FieldType
from qdsl.dsl.question.asked_pieces import AskedPieces
from qdsl.dsl.question.conditions import between
from qdsl.dsl.question.model import Kind, Piece

_CLASSIFIERS = "个项条名家篇位件份"
_JOINS = frozenset({"和", "与", "到", "至", "-", "~", "and", "to"})


class NumberPieces(AskedPieces):
    """Numbers, comparisons and dates of the walk."""

    negate: int | None
    limit: int | None
    named_by: Piece | None

    def joined_number(self, i: int) -> int | None:
        """The number after pieces[i] joined to it by 到/and/-: a range's high end."""
        for k in (i + 1, i + 2):
            q = self.pieces[k] if k < len(self.pieces) else None
            if q is not None and q.kind is Kind.NUMBER:
                gap = self.b.gap(self.pieces[i], q).strip()
                return k if gap in _JOINS else None
        return None

    # -- handlers --------------------------------------------------------------
    def unnegatable(self) -> None:
        """A pending negation met a condition no plan can negate (a period, a number, an
        absence): it negates nothing, rather than the value that happens to come next."""
        if self.negate is not None:
            self.b.problem(self.pieces[self.negate].text, "unplaced", (), "negation")
            self.negate = None

    def on_comparison(self, i: int, p: Piece) -> None:
        self.unnegatable()
        after = p.entity == "True"
        j = i + 1 if after else i - 1
        q = self.pieces[j] if 0 <= j < len(self.pieces) else None
        if q is not None and q.kind is Kind.NUMBER and q.number is not None:
            k = self.joined_number(j)
            if p.op == "between" and k is not None:
                self.b.used.update({j, k})
                between(self.b, self.main, i, q, self.pieces[k])
                return
            self.b.used.add(j)
            words = f"{p.text} {q.text}" if after else f"{q.text} {p.text}"
            self.b.comparison(self.main, i, p.op or "eq", q.number, words)
        elif q is not None and q.kind is Kind.DATE:
            return  # dates carry their own direction
        elif p.op != "between":  # "between project 64 and 65" compares objects
            could = self.b.could(self.main, (FieldType.NUMBER,))
            self.b.problem(p.text, "unplaced", could, "comparison")

    def on_number(self, i: int, p: Piece) -> None:
        self.unnegatable()
        k = self.joined_number(i)
        if k is not None:
            self.b.used.add(k)
            between(self.b, self.main, i, p, self.pieces[k])
            return
        nxt_text = self.b.text[p.end : p.end + 2].strip()[:1]
        nxt = self.next_piece(i)
        counted = (
            nxt is not None
            and not self.b.gap(p, nxt).strip()
            and (nxt.kind is Kind.SORT or nxt is self.named_by)
        )  # "the 3 most recent tickets", "the 2 tickets with ..."
        if (counted or (nxt_text and nxt_text in _CLASSIFIERS)) and self.limit is None:
            self.limit = int(p.number or 0)
            return
        if [j for j in self.b.near(i, (Kind.FIELD,), span=1) if j not in self.b.used]:
            self.b.comparison(self.main, i, "eq", p.number or 0, p.text)
            return
        could = self.b.could(self.main, (FieldType.NUMBER,))
        self.b.problem(p.text, "unplaced", could, "number")

    def on_date(self, i: int, p: Piece) -> None:
        self.unnegatable()
        self.b.dates(self.main, i, p)
