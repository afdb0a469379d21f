"""A per-word or 按 / "by" leading to a related entity: "How many orders does each
customer have?" (one group per customer: `group by customer`), "total paid by
customer tier" (`group by order.customer.tier`), "每个品类的销量" (the order line's
product's category).

The word after the per-word is an entity of the catalog other than the asked one
(then, if the very next word is one of that entity's fields, that field), or a
field of another entity; the grouping is the one declared many-to-one path (at
most two relations) from the asked entity to it. Every row then falls in one
group. Several such paths, or none, are no grouping: the word stays what the
reader makes of it otherwise (a problem saying it belongs to another entity), so
no breakdown is built on a guessed path.
"""

from __future__ import annotations

from dataclasses import dataclass

from qdsl.dsl.catalog import Cardinality, Catalog
from qdsl.dsl.kinds.breakdown import groupable
from qdsl.dsl.question.model import Kind, Piece
from qdsl.dsl.question.related import SEPARATOR, paths_to


@dataclass(frozen=True)
class RelatedGroup:
    """A grouping across relations and how many pieces of the question name it."""

    field: str
    pieces: int


def one_path(catalog: Catalog, main: str, target: str) -> tuple[str, ...] | None:
    """The one many-to-one relation path from `main` to `target`, if exactly one."""
    steps = catalog.relation_steps
    found = []
    for path in paths_to(catalog, main).get(target, []):
        here, ok = main, True
        for name in path:
            step = steps[here][name]
            ok = ok and step.cardinality is Cardinality.MANY_TO_ONE
            here = step.target
        if ok:
            found.append(path)
    return found[0] if len(found) == 1 else None


def single_paths(catalog: Catalog, main: str) -> set[str]:
    """The entities one many-to-one relation path from `main` reaches."""
    return {e for e in paths_to(catalog, main) if one_path(catalog, main, e) is not None}


def _field_of(catalog: Catalog, entity: str, p: Piece | None) -> str | None:
    """The groupable field of `entity` that piece `p` names, if it names one."""
    if p is None or p.kind is not Kind.FIELD:
        return None
    allowed = groupable(catalog.entities[entity])
    found = [s.field for s in p.senses if s.entity == entity and s.field in allowed]
    return found[0] if len(found) == 1 else None


def related_group(
    catalog: Catalog, main: str, nxt: Piece, after: Piece | None
) -> RelatedGroup | None:
    """The grouping a per-word leads to when the word after it (`nxt`, and `after`
    right behind it) names a related entity or its field; None when it does not."""
    if nxt.kind is Kind.ENTITY:
        others = {s.entity for s in nxt.senses if s.kind is Kind.ENTITY and s.entity != main}
        if len(others) != 1 or any(s.entity == main for s in nxt.senses):
            return None
        target = others.pop()
        assert target is not None
        path = one_path(catalog, main, target)
        if path is None:
            return None
        field = _field_of(catalog, target, after)
        if field is not None:
            return RelatedGroup(SEPARATOR.join((*path, field)), 2)
        return RelatedGroup(SEPARATOR.join(path), 1)
    if nxt.kind is Kind.FIELD and not any(s.entity == main for s in nxt.senses):
        owners = {s.entity for s in nxt.senses if s.entity}
        if len(owners) != 1:
            return None
        target = owners.pop()
        assert target is not None
        path = one_path(catalog, main, target)
        field = _field_of(catalog, target, nxt)
        if path is None or field is None:
            return None
        return RelatedGroup(SEPARATOR.join((*path, field)), 1)
    return None
