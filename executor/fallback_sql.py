"""The text fallback as one statement: every spelling of a value, one round trip.

Each spelling sits in one of FALLBACK_SLOTS fixed term slots (an unused slot
repeats the first spelling), so the SQL text does not depend on how many
spellings a value has and the statement is built once per plan shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import ColumnClause

from qdsl.dsl.bound import BoundFilter
from qdsl.executor import names as N
from qdsl.executor.predicates import contains
from qdsl.executor.tables import grams_table

if TYPE_CHECKING:
    from qdsl.executor.selected import Selected
    from qdsl.executor.statements import AnySelect, StatementBuilder

# Term slots per fact filter. A value with more spellings than this is
# searched in several runs of the same statement.
FALLBACK_SLOTS = 8


def fallback_hits(
    b: StatementBuilder, bound: tuple[BoundFilter, ...], *, has_subjects: bool
) -> tuple[AnySelect, list[ColumnElement[Any]]]:
    """The text fallback's hits, every spelling of every fact filter in one statement,
    and the columns naming, per filter, the first spelling a row contains.

    Per filter, one grouped pass over text_grams (the union
    of its slots' grams) keeps the entities having every gram of some slot; those
    are confirmed by a substring test of any slot's spelling on the real columns
    (a text holding a spelling holds its grams, so this is the per-spelling
    search, one round trip). Hits are capped, in id order, at :fallback_cap."""
    et = b.et
    conds = b.conditions(bound, skip_positive_facts=True)
    if has_subjects:
        conds.append(et.id.in_(b.subject_ids()))
    tenant = b.p(N.TENANT, type_=sa.Text())
    entity_type = b.p(N.ENTITY_TYPE, type_=sa.Text())
    labels: list[ColumnElement[Any]] = []
    for bf in bound:
        if not bf.positive_fact:
            continue
        # the grams hold ids as text: compared with the id as text
        conds.append(et.row_id.in_(_candidates(b, bf.index, tenant, entity_type)))
        confirms = _confirms(b, bf.index)
        conds.append(sa.or_(*confirms))
        slot = [b.p(N.slot_number(j), type_=sa.Integer()) for j in range(FALLBACK_SLOTS)]
        labels.append(sa.case(*zip(confirms, slot, strict=True)).label(N.hit_slot(bf.index)))
    hits = (
        sa.select(et.row_id.label(N.ROW_ID))
        .select_from(et.table)
        .where(*conds)
        .order_by(et.id)
        .limit(b.p(N.FALLBACK_CAP, type_=sa.Integer()))
    )
    return hits, labels


def confirm(
    b: StatementBuilder, col: ColumnClause[object], term: sa.BindParameter[object]
) -> ColumnElement[bool]:
    """The substring test on a real column (case-insensitive, as terms are casefolded)."""
    if b.dialect == "postgresql":
        return contains(col, term, b.dialect, ilike=True)
    return contains(sa.func.lower(col), term, b.dialect)


def _candidates(b: StatementBuilder, index: int, tenant: Any, entity_type: Any) -> AnySelect:
    """Entities whose grams include every gram of some slot's spelling."""
    g = grams_table()
    # count(DISTINCT ...) also keeps PostgreSQL from hashing the groups: it
    # aggregates in entity_id order, so the id-ordered cap stops early on
    # common grams instead of confirming every candidate.
    have_all = [
        sa.func.count(
            sa.distinct(
                sa.case(
                    (
                        g.c.gram.in_(b.p(N.slot_grams(index, j), expanding=True, type_=sa.Text())),
                        g.c.gram,
                    )
                )
            )
        )
        == b.p(N.slot_gram_count(index, j), type_=sa.Integer())
        for j in range(FALLBACK_SLOTS)
    ]
    return (
        sa.select(g.c.entity_id)
        .where(
            g.c.tenant_id == tenant,
            g.c.entity_type == entity_type,
            g.c.gram.in_(b.p(N.grams(index), expanding=True, type_=sa.Text())),
        )
        .group_by(g.c.entity_id)
        .having(sa.or_(*have_all))
    )


def _confirms(b: StatementBuilder, index: int) -> list[ColumnElement[bool]]:
    """Per slot: its spelling is a substring of some text_search column."""
    et = b.et
    return [
        sa.or_(
            *(
                confirm(b, et.col(c), b.p(N.slot_text(index, j), type_=sa.Text()))
                for c in et.spec.text_search
            )
        )
        for j in range(FALLBACK_SLOTS)
    ]


def fallback_rows(
    b: StatementBuilder,
    bound: tuple[BoundFilter, ...],
    selected: tuple[Selected, ...],
    *,
    guard: bool,
    has_subjects: bool,
) -> AnySelect:
    """The entity rows of the text fallback's hits, with the spelling each matched."""
    hit_ids, labels = fallback_hits(b, bound, has_subjects=has_subjects)
    hits = hit_ids.subquery("hits")
    return (
        b.entity_select(selected, baseline=guard, total=True)
        .add_columns(*labels)
        .join(hits, hits.c[N.ROW_ID] == b.et.row_id)
        .where(*b.bounds())
        .order_by(*b.order_by())
        .limit(b.limit())
    )
