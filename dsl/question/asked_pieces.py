"""The walk's handlers for what a question asks beyond rows: its aggregate words
(sums, averages, the per-words a count is grouped by), the breakdown a count per
group becomes, and the function a measure question asks. A part of the walk
(`walk.Walk`), kept apart for size.
"""

from __future__ import annotations

from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import MAX_GROUPINGS, QueryType, SortDirection
from qdsl.dsl.kinds import PlannerPolicy, kind_of
from qdsl.dsl.kinds.breakdown import groupable
from qdsl.dsl.question import measures
from qdsl.dsl.question.labels import TextPieces
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.ranked_groups import ranked_group
from qdsl.dsl.question.related_groups import related_group
from qdsl.dsl.question.target import sense_for
from qdsl.dsl.question.words import GROUP_WORDS


class AskedPieces(TextPieces):
    """Aggregate words, groupings and measures of the walk."""

    asked: measures.Asked
    limit: int | None

    def rank_groups(self) -> None:
        """ "Top 5 products by revenue": a declared measure per related object, the
        highest first (`ranked_groups`); its words are read here, before the walk."""
        found = ranked_group(self.b.catalog, self.main, self.pieces)
        if found is None:
            return
        self.asked.related.add(found.field)
        self.asked.ranked.append(found.field)
        self.limit = found.limit
        self.b.used.update(found.pieces)

    def on_aggregate(self, i: int, p: Piece) -> None:
        self.asked.words.append(i)
        nxt = self.next_piece(i)
        leads = p.op in ("per", "group")
        s = sense_for(nxt, self.main, None) if nxt is not None and leads else None
        if (
            nxt is not None
            and s is not None
            and s.kind is Kind.FIELD
            and s.field
            and not self.b.gap(p, nxt).strip()
        ):
            # "每个城市", "per channel": the field a count per group is grouped by
            # (`measures.place` decides whether the question counts)
            self.asked.per_fields[i] = s.field
            self.b.used.add(i + 1)
        elif nxt is not None and leads and not self.b.gap(p, nxt).strip():
            self.related_grouping(i, i + 1, per=True)

    def order_by(self, i: int) -> None:
        """ "by budget", "按预算排序": the next field sorts or groups the answer
        (`measures.place` decides which)."""
        nxt = self.next_piece(i)
        s = sense_for(nxt, self.main, None) if nxt is not None else None
        if nxt is None or s is None or s.kind is not Kind.FIELD or not s.field:
            if nxt is not None and self.related_grouping(i, i + 1, per=False):
                return  # "by customer tier": across the relation reaching it
            if self.pieces[i].text.startswith("按"):
                self.asked.groupings.append((i, None))
            return  # "by phone": a plain preposition
        self.b.used.add(i + 1)
        self.asked.groupings.append((i, s.field))

    def related_grouping(self, i: int, at: int, *, per: bool) -> bool:
        """ "each customer", "by customer tier": a grouping across the declared
        relation reaching the entity the words after piece `i` name."""
        after = self.pieces[at + 1] if at + 1 < len(self.pieces) else None
        if after is not None and self.b.gap(self.pieces[at], after).strip():
            after = None
        found = related_group(self.b.catalog, self.main, self.pieces[at], after)
        if found is None:
            return False
        self.asked.related.add(found.field)
        if per:
            self.asked.per_fields[i] = found.field
        else:
            self.asked.groupings.append((i, found.field))
        self.b.used.update(range(at, at + found.pieces))
        return True

    def grouped(
        self, qt: QueryType | None, placed: measures.Placed
    ) -> tuple[QueryType | None, tuple[tuple[str, Grain | None], ...]]:
        """A count or a measure per group is a breakdown; a breakdown asked for without
        a field to group by is a problem, and "统计工单数量" (no 按) a count."""
        group_by = placed.groups
        grouping = (QueryType.COUNT, QueryType.BREAKDOWN, QueryType.AGGREGATE)
        if group_by and not placed.refused and qt in grouping:
            if len(group_by) > MAX_GROUPINGS:
                self.b.problem(self.b.text, "unsupported", (), "grouping")
            self.drop_periods(placed.periods)
            return QueryType.BREAKDOWN, group_by[:MAX_GROUPINGS]
        if qt is QueryType.BREAKDOWN:
            if GROUP_WORDS.search(self.b.text):
                self.b.problem(self.b.text, "unplaced", tuple(groupable(self.ent)), "grouping")
                return qt, ()
            return QueryType.COUNT, ()
        return qt, ()

    def drop_periods(self, spans: tuple[tuple[int, int], ...]) -> None:
        """The period words a breakdown groups by are not unknown words ("每月", "monthly");
        what else a residual piece holds stays one."""
        for p in self.pieces:
            if p.kind is not Kind.RESIDUAL:
                continue
            for start, end in spans:
                if p.start < end and start < p.end:
                    term = self.display[p.start : p.end]
                    rest = (self.display[p.start : start] + self.display[end : p.end]).strip()
                    if term in self.residuals:
                        self.residuals.remove(term)
                        if rest:
                            self.residuals.append(rest)

    def measure_of(
        self,
        placed: measures.Placed,
        qt: QueryType | None,
        sort: tuple[tuple[str, SortDirection], ...],
        projection: list[str],
        *,
        per_group: bool,
    ) -> tuple[list[str], str]:
        """The fields a measure question names and the function it asks: of the
        aggregate kind, or of each group of a breakdown ("total paid per method")."""
        # "the highest salary": the superlative names the kind's measure, not an order
        named = [*projection, *(f for f, _ in sort if f not in projection)]
        asked = QueryType.AGGREGATE if per_group else qt
        policy = kind_of(asked).policy if asked is not None else PlannerPolicy()
        return named, self.measured(placed, asked, sort, named, policy)

    def measured(
        self,
        placed: measures.Placed,
        qt: QueryType | None,
        sort: tuple[tuple[str, SortDirection], ...],
        projection: list[str],
        policy: PlannerPolicy,
    ) -> str:
        """The function a measure kind's question asks; a problem when no field (or
        none the catalog lets it aggregate) is named: ask, never guess."""
        function = policy.measure_aggregation
        if qt is QueryType.AGGREGATE:  # the kind the measure words ask for
            function = placed.function or _extreme(sort) or function
        measures.need_measure(
            self.b, self.ent, projection, function, qt, declared=placed.declared, words=placed.words
        )
        return function


def _extreme(sort: tuple[tuple[str, SortDirection], ...]) -> str | None:
    """ "the highest salary" asked as a value: max (min for the lowest)."""
    if len(sort) != 1:
        return None
    return "max" if sort[0][1] is SortDirection.DESC else "min"
