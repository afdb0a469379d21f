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

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Select, and_, distinct, func, select

from qdsl.dsl.textnorm import normalize_text
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
