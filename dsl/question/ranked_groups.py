"""A declared measure ranked over a related entity: "Top 5 products by revenue",
"销售额最高的 5 个商品".

The question names one declared measure of the asked entity E, one other entity X
that E reaches by its one many-to-one relation path, a number of objects and a
ranking from the highest: it asks the measure per object of X, the N highest, a
breakdown of E grouped by that path with limit N (a breakdown ranks its groups by
their value, the largest first, so the plan states no sort).

Anything else stays what the reader makes of it otherwise (a problem): a ranking
from the lowest (no breakdown ranks so), no number, several entities, several
measures or a per-word or 按 / "by" grouping of the question's own. No grouping is
built on a guessed path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.question.functions import is_measure_piece
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.related import SEPARATOR
from qdsl.dsl.question.related_groups import one_path
from qdsl.dsl.question.target import entity_senses

# a number of objects that is itself a ranking from the highest ("top 5")
_TOP = ("top",)


@dataclass(frozen=True)
class RankedGroup:
    """The grouping, the number of groups and the pieces that stated them."""

    field: str
    limit: int
    pieces: tuple[int, ...]


def ranked_group(catalog: Catalog, main: str, pieces: Sequence[Piece]) -> RankedGroup | None:
    measures = [
        i
        for i, p in enumerate(pieces)
        if is_measure_piece(p) and any(s.entity == main for s in p.senses)
    ]
    others = [p for p in pieces if p.kind is Kind.AGGREGATE and not is_measure_piece(p)]
    if len(measures) != 1 or others:
        return None  # a function word, a per-word or another measure: read elsewhere
    limits = [i for i, p in enumerate(pieces) if p.kind is Kind.LIMIT and p.number]
    sorts = [i for i, p in enumerate(pieces) if p.kind is Kind.SORT and p.entity != "by"]
    if len(limits) != 1 or any(pieces[i].op != "desc" for i in sorts):
        return None
    top = pieces[limits[0]].text.startswith(_TOP)
    if not (top or sorts):
        return None  # "5 products' revenue": no ranking asked
    entities = [
        i for i, p in enumerate(pieces) if p.kind is Kind.ENTITY and set(entity_senses(p)) - {main}
    ]
    if len(entities) != 1:
        return None
    named = set(entity_senses(pieces[entities[0]]))
    if len(named) != 1 or main in named:
        return None
    path = one_path(catalog, main, named.pop())
    if path is None:
        return None
    used = (entities[0], limits[0], *sorts)
    return RankedGroup(SEPARATOR.join(path), int(pieces[limits[0]].number or 0), used)
