"""Character n-gram index for the fallback text search (SPEC 5).

Why not only pg_trgm: a trigram index gives nothing for the terms Chinese
users type most. A two-character term such as `港股` has no trigram, so a
trigram-indexed `ILIKE '%港股%'` scans the whole index, and under a `C`
collation pg_trgm extracts no trigrams from CJK text at all. SQLite has no
trigram index either. So both dialects share this table:

* indexing: for every entity, the distinct character unigrams and bigrams of
  `normalize_text(column)`, per text_search column (no grams across column
  boundaries), go to `text_grams(tenant_id, entity_type, gram, entity_id)`;
* searching: `grams_for_term(term)` gives the bigrams of the normalized term
  (its unigram when it is one character); the candidates are the entities that
  have all of them, which the executor then confirms with LIKE/ILIKE on the
  real columns (grams say "these characters occur adjacently", not "in this
  order as one substring").

Spacing decision: grams are taken from the normalized text as it is, spaces
included (normalize_text has collapsed runs of whitespace to one space). A gram
that is only whitespace is dropped. So `沪深 A股` and `沪深A股` index
differently, exactly as the confirming LIKE distinguishes them: removing
spaces would only produce candidates that the confirmation then rejects.
Terms and texts pass the same `normalize_text`, so full-width/half-width and
case differences do not matter for the candidate step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, distinct, func, select

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.bulk import bulk_insert
from qdsl.facts.index_state import source_table
from qdsl.facts.tables import text_grams


def _grams(norm: str) -> set[str]:
    out = {ch for ch in norm if not ch.isspace()}
    out.update(norm[i : i + 2] for i in range(len(norm) - 1) if not norm[i : i + 2].isspace())
    return out


def grams_for_text(text: str | None) -> frozenset[str]:
    """Distinct unigrams and bigrams of one normalized text value."""
    if not text:
        return frozenset()
    return frozenset(_grams(normalize_text(text)))


def grams_for_entity(texts: Iterable[str | None]) -> frozenset[str]:
    """The grams of an entity: the union over its text_search column values."""
    out: set[str] = set()
    for text in texts:
        if text:
            out |= _grams(normalize_text(text))
    return frozenset(out)


def grams_for_term(term: str) -> tuple[str, ...]:
    """The grams a search term needs: its bigrams, or its unigram if it is one character.

    Sorted, so the same term always yields the same bound parameters. Empty for
    a term that normalizes to nothing (the caller must refuse such a search).
    """
    norm = normalize_text(term)
    if not norm:
        return ()
    if len(norm) == 1:
        return (norm,)
    return tuple(sorted(_grams(norm) - set(norm)))


def gram_rows(
    tenant_id: str, entity_type: str, entity_id: str, texts: Iterable[str | None]
) -> list[dict[str, str]]:
    """Rows for `text_grams` for one entity (for bulk insert)."""
    return [
        {"tenant_id": tenant_id, "entity_type": entity_type, "gram": g, "entity_id": entity_id}
        for g in sorted(grams_for_entity(texts))
    ]


def candidate_ids_query(tenant_id: str, entity_type: str, term: str) -> Select[Any]:
    """SELECT of the entity ids having every gram of `term` (tenant and grams bound).

    Raises ValueError for a term without grams; the caller confirms the
    candidates with LIKE/ILIKE on the real columns.
    """
    grams = grams_for_term(term)
    if not grams:
        raise ValueError("search term is empty after normalization")
    return (
        select(text_grams.c.entity_id)
        .where(
            and_(
                text_grams.c.tenant_id == tenant_id,
                text_grams.c.entity_type == entity_type,
                text_grams.c.gram.in_(grams),
            )
        )
        .group_by(text_grams.c.entity_id)
        .having(func.count(distinct(text_grams.c.gram)) == len(grams))
    )


# -- refresh from the deployer's tables (`qdsl index refresh`) ---------------------------

# Rows read per statement: bounds memory on a large tenant.
REFRESH_CHUNK = 500


@dataclass(frozen=True)
class TextCounts:
    """What refreshing one tenant's grams of one entity did."""

    rows: int = 0  # entity rows read
    changed: int = 0  # entities whose grams were rewritten or dropped
    grams_added: int = 0
    grams_removed: int = 0

    def __add__(self, other: TextCounts) -> TextCounts:
        return TextCounts(
            self.rows + other.rows,
            self.changed + other.changed,
            self.grams_added + other.grams_added,
            self.grams_removed + other.grams_removed,
        )


def _indexed(
    conn: Connection, tenant_id: str, entity_type: str, ids: list[str]
) -> dict[str, set[str]]:
    g = text_grams.c
    found: dict[str, set[str]] = {}
    rows = conn.execute(
        select(g.entity_id, g.gram).where(
            g.tenant_id == tenant_id, g.entity_type == entity_type, g.entity_id.in_(ids)
        )
    )
    for entity_id, gram in rows:
        found.setdefault(entity_id, set()).add(gram)
    return found


def _drop(conn: Connection, tenant_id: str, entity_type: str, ids: list[str]) -> None:
    g = text_grams.c
    for start in range(0, len(ids), REFRESH_CHUNK):
        conn.execute(
            text_grams.delete().where(
                g.tenant_id == tenant_id,
                g.entity_type == entity_type,
                g.entity_id.in_(ids[start : start + REFRESH_CHUNK]),
            )
        )


def _sync(
    conn: Connection, tenant_id: str, entity_type: str, wanted: Mapping[str, frozenset[str]]
) -> TextCounts:
    """Make the grams of `wanted`'s entities exactly `wanted` (rewrite only what differs)."""
    have = _indexed(conn, tenant_id, entity_type, list(wanted))
    stale = [i for i, grams in wanted.items() if have.get(i, set()) != grams]
    if not stale:
        return TextCounts(rows=len(wanted))
    added = sum(len(wanted[i] - have.get(i, set())) for i in stale)
    removed = sum(len(have.get(i, set()) - wanted[i]) for i in stale)
    _drop(conn, tenant_id, entity_type, [i for i in stale if i in have])
    bulk_insert(
        conn,
        text_grams,
        (
            {"tenant_id": tenant_id, "entity_type": entity_type, "gram": gram, "entity_id": i}
            for i in stale
            for gram in sorted(wanted[i])
        ),
    )
    return TextCounts(len(wanted), len(stale), added, removed)


def refresh_entity_grams(
    conn: Connection,
    tenant_id: str,
    entity_type: str,
    spec: EntitySpec,
    *,
    since: datetime | None = None,
) -> TextCounts:
    """Bring one tenant's grams of one entity in line with its table's text_search columns.

    Reads the tenant's rows (the tenant bound in SQL) in id order, REFRESH_CHUNK at
    a time, and rewrites the grams of each entity whose gram set differs, so a
    second refresh writes nothing. With `since` (the entity must name its
    `updated_at` column) only rows changed at or after it are read, and
    entities deleted from the table keep their grams until a full refresh;
    without it, grams of entities no longer in the table are dropped.
    """
    t = source_table(spec)
    id_col, tenant_col = t.c[spec.id], t.c[spec.tenant]
    base = select(id_col, *(t.c[c] for c in spec.text_search)).where(tenant_col == tenant_id)
    if since is not None:
        if spec.updated_at is None:
            raise ValueError(f"entity {entity_type} names no updated_at column")
        base = base.where(t.c[spec.updated_at] >= since)
    total = TextCounts()
    seen: set[str] = set()
    last: Any = None
    while True:
        q = base if last is None else base.where(id_col > last)
        rows = conn.execute(q.order_by(id_col).limit(REFRESH_CHUNK)).all()
        if not rows:
            break
        last = rows[-1][0]
        wanted = {str(r[0]): grams_for_entity(r[1:]) for r in rows}
        seen.update(wanted)
        total += _sync(conn, tenant_id, entity_type, wanted)
    if since is None:
        total += _drop_missing(conn, tenant_id, entity_type, seen)
    return total


def _drop_missing(
    conn: Connection, tenant_id: str, entity_type: str, present: set[str]
) -> TextCounts:
    g = text_grams.c
    counts = conn.execute(
        select(g.entity_id, func.count())
        .where(g.tenant_id == tenant_id, g.entity_type == entity_type)
        .group_by(g.entity_id)
    ).all()
    gone = {str(i): int(n) for i, n in counts if str(i) not in present}
    _drop(conn, tenant_id, entity_type, sorted(gone))
    return TextCounts(changed=len(gone), grams_removed=sum(gone.values()))
