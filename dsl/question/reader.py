"""read_question(): one reading of a question against a catalog, shared by the
planner and the verifier's `question_covered`.

Every piece of the question is accounted for: a query-type cue, the entity, a
condition (value, linked value, id, number, date range, absence, label text),
sort and limit, a field to show, or a word that carries no condition. What is
left is a `Problem`, and a reading with problems is not understood.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.linking import TenantValues
from qdsl.dsl.question.conditions import Builder
from qdsl.dsl.question.functions import asked_query_type
from qdsl.dsl.question.lexicon import lexicon_for, senses_with
from qdsl.dsl.question.model import Kind, Piece, Reading
from qdsl.dsl.question.segment import candidates, choose, residual
from qdsl.dsl.question.target import choose_entity
from qdsl.dsl.question.walk import Walk
from qdsl.dsl.question.words import CUES
from qdsl.dsl.textnorm import normalize_text

_CJK = re.compile(r"[\u3400-\u9fff]")
# Cue order decides: "有多少" is a count, not an existence.
_PRIORITY = tuple(qt for qt, _ in CUES)


def _display(question: str, text: str) -> str:
    """The question as typed (NFKC, spaces collapsed), when it indexes like `text`."""
    shown = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", question)).strip()
    return shown if len(shown) == len(text) else text


def _query_type(pieces: Sequence[Piece]) -> QueryType | None:
    found = {p.query_type for p in pieces if p.kind is Kind.CUE}
    return next((q for q in _PRIORITY if q in found), None)


def read_question(
    question: str,
    catalog: Catalog,
    *,
    now: datetime | None = None,
    values: TenantValues | None = None,
    context_entities: Sequence[str] = (),
) -> Reading:
    """Read `question` against `catalog` (and the asking tenant's linked `values`)."""
    now = now or datetime.now(UTC)
    text = normalize_text(question)
    display = _display(question, text)
    lang = "zh" if _CJK.search(text) else "en"
    lex = lexicon_for(catalog)
    senses = senses_with(lex, values)
    kept = choose(
        candidates(
            text,
            display,
            catalog,
            senses,
            lex.field_spellings,
            contains_senses=lex.contains_spellings,
            now=now,
        )
    )
    pieces = [p for p in kept if p.kind is not Kind.FUNCTION]
    leftovers = residual(text, kept)
    qt = asked_query_type(_query_type(pieces), pieces, text)
    main, named = choose_entity(qt, pieces, catalog, context_entities)
    all_pieces = sorted([*pieces, *leftovers], key=lambda p: p.start)
    b = Builder(catalog, text, all_pieces, now, lang, stems=lex.verb_stems)
    if main is not None:
        return Walk(b, qt, main, named, display).run()
    for p in all_pieces:
        if p.kind in (Kind.RESIDUAL, Kind.VALUE, Kind.LINKED, Kind.NUMBER, Kind.DATE):
            b.problem(p.text, "residual", b.could(None))
    return Reading(
        question=display,
        text=text,
        language="zh" if lang == "zh" else "en",
        now=now,
        pieces=tuple(all_pieces),
        query_type=qt,
        entity=None,
        problems=tuple(b.problems),
    )
