"""Which entity a question is about, and what each catalog spelling means for it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.question.model import Kind, Piece, Sense
from qdsl.dsl.question.related import paths_to
from qdsl.dsl.question.related_groups import single_paths

_CJK = re.compile(r"[\u3400-\u9fff]")


def entity_senses(p: Piece) -> list[str]:
    return [s.entity for s in p.senses if s.kind is Kind.ENTITY and s.entity]


def choose_entity(
    qt: QueryType | None,
    pieces: Sequence[Piece],
    catalog: Catalog,
    context_entities: Sequence[str],
) -> tuple[str | None, bool]:
    """The entity asked about and whether the question names it (else a default)."""
    named: list[str] = []
    for p in pieces:
        if p.kind in (Kind.ENTITY, Kind.FIELD, Kind.VALUE):
            for e in entity_senses(p):
                if e not in named:
                    named.append(e)
    ids = list(dict.fromkeys(p.entity for p in pieces if p.kind is Kind.ID and p.entity))
    measured = _measure_owner(qt, pieces, catalog, named)
    if measured is not None and not ids:
        return measured, True
    found = _named_entity(qt, pieces, catalog, named, ids)
    if found is not None:
        return found, True
    if context_entities and any(p.kind is Kind.PRONOUN for p in pieces):
        return context_entities[0], False
    return _default_entity(qt, pieces, catalog), False


def _measure_owner(
    qt: QueryType | None, pieces: Sequence[Piece], catalog: Catalog, named: list[str]
) -> str | None:
    """ "total paid by customer tier": a measure one entity declares, asked of the
    entities it reaches through many-to-one relations, is that entity's (the
    others group or filter it); None where the question asks anything else."""
    if qt not in (None, QueryType.AGGREGATE, QueryType.BREAKDOWN):
        return None
    owners = {
        s.entity
        for p in pieces
        if p.kind is Kind.AGGREGATE
        for s in p.senses
        if s.kind is Kind.AGGREGATE and s.entity and s.value
    }
    if len(owners) != 1:
        return None
    owner = owners.pop()
    if owner in named:
        return None
    # the entities the question's nouns, fields and values are of (a word the owner
    # has too is the owner's)
    others = set(named)
    for p in pieces:
        if p.kind in (Kind.FIELD, Kind.VALUE, Kind.LINKED):
            mine = {s.entity for s in p.senses if s.entity}
            if owner not in mine:
                others |= mine
    if not others:
        return None
    ones = single_paths(catalog, owner)
    return owner if all(e in ones for e in others) else None


def _named_entity(
    qt: QueryType | None,
    pieces: Sequence[Piece],
    catalog: Catalog,
    named: list[str],
    ids: list[str],
) -> str | None:
    """The entity the question names, by its words or its ids; None if it names none."""
    # "Which tasks are assigned to project 64": tasks, through task.project_id.
    for main in named:
        if main in ids:
            continue
        ent = catalog.entities[main]
        if any(f.references in ids and f.references != main for f in ent.fields.values()):
            return main
    with_ids = [e for e in named if e in ids]
    if with_ids:
        return with_ids[0]
    fitting = [e for e in named if qt is None or qt in catalog.entities[e].query_types]
    # An entity named only through a spelling that is also a value (待办) yields to
    # one named outright.
    plain = [
        e for e in fitting if any(p.kind is Kind.ENTITY and entity_senses(p) == [e] for p in pieces)
    ]
    head = _zh_head(plain, pieces, catalog)
    if head is not None:
        return head
    for candidates in (plain, fitting, named, ids):
        if candidates:
            return candidates[0]
    return None


def _zh_head(plain: list[str], pieces: Sequence[Piece], catalog: Catalog) -> str | None:
    """In Chinese the head of "柏林客户的订单" is the last noun: of entities that
    declared relations join, the one named last is asked about. Chinese by its
    nouns, not by a name it quotes: "the cancelled orders of customers in 北京" asks
    about orders."""
    nouns = [p for p in pieces if p.kind is Kind.ENTITY]
    if len(plain) < 2 or not any(_CJK.search(p.text) for p in nouns):
        return None
    order = [e for p in pieces if p.kind is Kind.ENTITY for e in entity_senses(p) if e in plain]
    last = order[-1]
    reach = paths_to(catalog, last)
    return last if all(e == last or e in reach for e in plain) else None


def _default_entity(qt: QueryType | None, pieces: Sequence[Piece], catalog: Catalog) -> str | None:
    """The entity of a question that names none: the catalog's default for its
    query type, or the one entity its values and fields belong to."""
    owners = list(
        dict.fromkeys(
            s.entity
            for p in pieces
            if p.kind in (Kind.VALUE, Kind.LINKED, Kind.FIELD, Kind.AGGREGATE)
            for s in p.senses
            if s.kind is not Kind.ENTITY and s.entity
        )
    )
    default = catalog.default_entity(qt) if qt is not None else None
    # An explanation names its topic, not an entity: "单点登录怎么配置" asks the
    # documents about SSO even where SSO is a value of tickets.
    topic = qt is not None and kind_of(qt).policy.text_fallback
    if default is not None and (not owners or default in owners or topic):
        return default
    if len(owners) == 1:
        return owners[0]
    # "What is the category of Desk Lamp?": a name both a product and an order line
    # bear, and a field only products have: the one entity every piece can be about
    shared: set[str] | None = None
    for p in pieces:
        if p.kind in (Kind.VALUE, Kind.LINKED, Kind.FIELD):
            mine = {s.entity for s in p.senses if s.kind is not Kind.ENTITY and s.entity}
            shared = mine if shared is None else shared & mine
    if shared is not None and len(shared) == 1:
        return next(iter(shared))
    return None


def sense_for(p: Piece, main: str, named_by: Piece | None) -> Sense | None:
    """What a catalog piece means in a question about `main` (None: nothing of main)."""
    if p is named_by:
        return Sense(Kind.ENTITY, main)
    own = [s for s in p.senses if s.entity == main and s.kind is not Kind.ENTITY]
    if own:
        return own[0]
    ent = [s for s in p.senses if s.kind is Kind.ENTITY and s.entity == main]
    return ent[0] if ent else None
