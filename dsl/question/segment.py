"""Segmentation: every span of the normalized question that something accounts for.

Candidates come from the catalog's spellings (and the tenant's linked values),
ids, numbers, dates and the shared grammar words; overlaps go to the longest
span (then to the stronger kind). What no candidate covers is the residual,
cut into runs of CJK characters and of Latin words: no dictionary segmenter
is needed, the gaps between known spellings are the unknown terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.question import words as W
from qdsl.dsl.question.dates import find_dates
from qdsl.dsl.question.lexicon import (
    around,
    compiled,
    find,
    lexicon_for,
    present,
    squeeze,
)
from qdsl.dsl.question.model import Kind, Piece, Sense
from qdsl.dsl.question.numbers import find_numbers
from qdsl.dsl.question.required import PatternIndex

# Ties of equal length go to the kind listed first.
_RANK = {
    k: i
    for i, k in enumerate(
        (
            Kind.DATE,
            Kind.ID,
            Kind.ABSENCE,
            Kind.PRESENCE,
            Kind.LIMIT,
            Kind.LABEL_CUE,
            Kind.LINKED,
            Kind.VALUE,
            Kind.ENTITY,
            Kind.FIELD,
            Kind.CUE,
            Kind.COMPARISON,
            Kind.AGGREGATE,
            Kind.SORT,
            Kind.NEGATION,
            Kind.PRONOUN,
            Kind.NUMBER,
            Kind.FUNCTION,
        )
    )
}
_CLASSIFIERS = "个项条名家篇位件份"


def _compile_words(words: Sequence[str]) -> re.Pattern[str]:
    en = sorted((w for w in words if w.isascii()), key=len, reverse=True)
    return re.compile(r"(?<![a-z0-9'])(?:" + "|".join(re.escape(w) for w in en) + r")(?![a-z0-9'])")


_FUNCTION_EN = _compile_words(W.FUNCTION_EN)
_FUNCTION_PHRASES = tuple(re.compile(p) for p in W.FUNCTION_PHRASES)
_AGGREGATES = tuple((re.compile(p), op) for p, op in W.AGGREGATES)
_FUNCTION_ZH = tuple(dict.fromkeys(w for w in W.FUNCTION_ZH if not w.isascii()))


def _by_first(words: Sequence[str]) -> dict[str, tuple[tuple[int, str], ...]]:
    """first character -> (the word's place in `words`, the word): a question is
    scanned once rather than once per word."""
    out: dict[str, tuple[tuple[int, str], ...]] = {}
    for i, w in enumerate(words):
        out[w[0]] = (*out.get(w[0], ()), (i, w))
    return out


_FUNCTION_ZH_BY_FIRST = _by_first(_FUNCTION_ZH)


def _function_pieces(text: str) -> Iterator[Piece]:
    """Every occurrence of every function word, overlapping ones included, so a word
    that loses to a longer spelling ("还有" to "有多少") leaves its shorter
    neighbours ("还") accounted for. Listed word by word, in the words' order."""
    found: list[tuple[int, int, str]] = []
    by_first = _FUNCTION_ZH_BY_FIRST
    for start, ch in enumerate(text):
        words = by_first.get(ch)
        if words is not None:
            found.extend((i, start, w) for i, w in words if text.startswith(w, start))
    found.sort()
    for _i, start, word in found:
        yield Piece(start, start + len(word), word, Kind.FUNCTION)
    for m in _FUNCTION_EN.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.FUNCTION)
    for pat in _FUNCTION_PHRASES:
        for m in pat.finditer(text):
            yield Piece(m.start(), m.end(), m.group(), Kind.FUNCTION)


def _aggregate_pieces(text: str) -> Iterator[Piece]:
    """Sums, averages and breakdowns asked for (words.AGGREGATES)."""
    for pat, op in _AGGREGATES:
        for m in pat.finditer(text):
            if m.end() > m.start():
                yield Piece(m.start(), m.end(), m.group(), Kind.AGGREGATE, op=op)


_CUES = tuple((qt, pat) for qt, patterns in W.COMPILED_CUES for pat in patterns)
# The cue patterns are many and each needs words of its own: only those whose
# words the question holds are run (`required`).
_CUE_INDEX = PatternIndex([pat for _, pat in _CUES])
_NEGATION = re.compile("|".join(W.NEGATION))
_LABEL_CUE = re.compile("|".join(W.LABEL_CUES))
_PRONOUN = re.compile("|".join(W.PRONOUNS))
_LIMIT = tuple(re.compile(p) for p in W.LIMIT)
_COMPARISONS = tuple((re.compile(p), op, after) for p, op, after in W.COMPARISONS)
_ORDER_BY = re.compile(W.ORDER_BY)
_SUPERLATIVES = tuple((re.compile(p), d, t) for p, d, t in W.SUPERLATIVES)
_PUNCT_OR_SPACE = re.compile(r"[\s\W_]")


def _regex_pieces(text: str) -> Iterator[Piece]:
    yield from _cue_pieces(text)
    yield from _comparison_and_sort_pieces(text)
    yield from _cue_word_pieces(text)
    yield from _aggregate_pieces(text)
    yield from _function_pieces(text)


def _cue_pieces(text: str) -> Iterator[Piece]:
    """Query-type cues and negations."""
    for i in _CUE_INDEX.candidates(text):
        qt, pat = _CUES[i]
        for m in pat.finditer(text):
            if m.end() > m.start():
                yield Piece(m.start(), m.end(), m.group(), Kind.CUE, query_type=qt)
    for m in _NEGATION.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.NEGATION)


def _comparison_and_sort_pieces(text: str) -> Iterator[Piece]:
    for pat, op, after in _COMPARISONS:
        for m in pat.finditer(text):
            # `after`: the number follows the words ("超过 20 万"); else it precedes.
            yield Piece(m.start(), m.end(), m.group(), Kind.COMPARISON, op=op, entity=str(after))
    for m in _ORDER_BY.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.SORT, op=None, entity="by")
    for pat, direction, about_time in _SUPERLATIVES:
        for m in pat.finditer(text):
            kind = "time" if about_time else "amount"
            yield Piece(m.start(), m.end(), m.group(), Kind.SORT, op=direction, entity=kind)


def _cue_word_pieces(text: str) -> Iterator[Piece]:
    """Limits ("前 5 个"), label cues and pronouns."""
    for pat in _LIMIT:
        for m in pat.finditer(text):
            yield Piece(m.start(), m.end(), m.group(), Kind.LIMIT, number=float(m.group("n")))
    for m in _LABEL_CUE.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.LABEL_CUE)
    for m in _PRONOUN.finditer(text):
        yield Piece(m.start(), m.end(), m.group(), Kind.PRONOUN)


def _contains_cues(text: str, texts: Mapping[str, tuple[Sense, ...]]) -> Iterator[Piece]:
    """A text field's name followed by "contains": the next words are its text."""
    squeezed = squeeze(text)
    for spelling in present(texts, squeezed):
        meant = texts[spelling]
        pat = around(spelling, "", r"\s*(?:" + W.CONTAINS_AFTER_FIELD + r")")
        for m in pat.finditer(text):
            yield Piece(m.start(), m.end(), m.group(), Kind.LABEL_CUE, senses=meant)
        after = around(spelling, r"\bin (?:the |its |their )?", "")
        for m in after.finditer(text):
            yield Piece(m.start(), m.end(), m.group(), Kind.LABEL_CUE, senses=meant, op="before")


# Absence and presence around a field's name: (before the name, after it, kind).
_AROUND_FIELD = (
    (W.ABSENCE_BEFORE + r"\s*", "", Kind.ABSENCE),
    ("", r"\s*" + W.ABSENCE_AFTER, Kind.ABSENCE),
    (W.PRESENCE_BEFORE + r"\s*", r"(?=\s*的)", Kind.PRESENCE),
    (
        r"(?<![a-z])(?:with|having) an? ",
        # a bound after the field's name is a comparison, not its presence
        r"(?! (?:of|over|above|under|below|more|less|fewer|greater|higher|lower|at|between"
        r"|no|not|up to|within|exactly|equal|from)\b| ?[<>=≤≥])",
        Kind.PRESENCE,
    ),
)


# A classifier after a Chinese value word: 图书类的商品, 图书类商品, 电子类型 (not 类似).
_VALUE_CLASS = r"(?:类型|类别|类(?!似))"
_CJK_END = re.compile(r"[\u4e00-\u9fff]$")

# No / some rows of a related entity around its name ("orders without a payment",
# "未付款的订单", "有退款记录的订单"): the walk reads them as a condition on the
# related rows themselves when a relation reaches the entity.
_AROUND_ENTITY = (
    (r"(?:" + W.ABSENCE_BEFORE + r"|未)\s*", "", Kind.ABSENCE),
    (r"(?<![没所])有\s*", r"(?=\s*的)", Kind.PRESENCE),
    (
        r"(?<![a-z])(?:with|having|that have|which have|who have) (?:an? |any |some )?",
        "",
        Kind.PRESENCE,
    ),
)


def _catalog_pieces(
    text: str,
    senses: Mapping[str, tuple[Sense, ...]],
    field_senses: Mapping[str, tuple[Sense, ...]],
) -> Iterator[Piece]:
    # Patterns are compiled once per spelling; a spelling whose letters the
    # question does not hold is skipped without running any pattern.
    squeezed = squeeze(text)
    for spelling in present(senses, squeezed):
        meant = senses[spelling]
        for s, e in find(text, spelling, squeezed):
            yield Piece(s, e, text[s:e], meant[0].kind, senses=meant)
        if meant[0].kind is Kind.VALUE and _CJK_END.search(spelling):
            # "图书类的商品": the kind of a value said with its classifier
            for m in around(spelling, "", _VALUE_CLASS).finditer(text):
                yield Piece(m.start(), m.end(), m.group(), Kind.VALUE, senses=meant)
        if any(m.kind is Kind.ENTITY for m in meant):
            # before the field's own: a spelling of both (付款, an entity and a date
            # field's verb) keeps every sense, and the walk prefers the field's
            for before, after, kind in _AROUND_ENTITY:
                for m in around(spelling, before, after).finditer(text):
                    yield Piece(m.start(), m.end(), m.group(), kind, senses=meant)
    for spelling in present(field_senses, squeezed):
        meant = field_senses[spelling]
        for before, after, kind in _AROUND_FIELD:
            for m in around(spelling, before, after).finditer(text):
                yield Piece(m.start(), m.end(), m.group(), kind, senses=meant)


@lru_cache(maxsize=1024)
def _bounded_id(pattern: str) -> re.Pattern[str]:
    """An entity's id pattern, not inside a longer ASCII word or number."""
    return re.compile(r"(?<![a-z0-9_-])(?:" + pattern + r")(?![a-z0-9_-])", re.IGNORECASE)


def _standalone(text: str, m: re.Match[str]) -> bool:
    """An id with letters may touch Chinese text ("员工E-5的状态"); one of digits
    alone must stand apart from any word ("2026年" is a year, not an id)."""
    if any(c.isalpha() and c.isascii() for c in m.group()):
        return True
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    return not (before.isalnum() or after.isalnum())


@lru_cache(maxsize=4096)
def _id_after_name(spelling: str) -> re.Pattern[str]:
    """An entity's name followed by a number: "项目 64", "run #12"."""
    return re.compile(
        compiled(spelling).pattern + r"\s*(?:#|no\.?\s*|id\s*|编号\s*|号\s*)?(\d+)(?![\d.])"
    )


def _id_pieces(text: str, display: str, catalog: Catalog) -> Iterator[Piece]:
    """Ids of a named entity: one matching its id pattern, or a number after its name.
    (A bare "#12" names no entity: it is not an id here.)"""
    squeezed = squeeze(text)
    named = set(present(lexicon_for(catalog).entity_names, squeezed))
    for ename, ent in catalog.entities.items():
        regex = ent.id_regex
        if regex is not None:
            for m in _bounded_id(regex.pattern).finditer(text):
                if not _standalone(text, m):
                    continue
                value = display[m.start() : m.end()]
                if regex.fullmatch(value) is None:
                    value = value.upper() if regex.fullmatch(value.upper()) else value
                yield Piece(m.start(), m.end(), value, Kind.ID, entity=ename)
            continue
        for spelling in (ename, *ent.synonyms):
            if spelling not in named:  # `could_match`, for every spelling at once
                continue
            for m in _id_after_name(spelling).finditer(text):
                yield Piece(m.start(1), m.end(1), m.group(1), Kind.ID, entity=ename)


_JOIN = r"\s*(?:和|与|跟|及|、|,|，|/|\band\b|\bwith\b|\bvs\.?|\bversus\b|\bor\b|或)\s*"


def _more_ids(text: str, display: str, catalog: Catalog, ids: list[Piece]) -> list[Piece]:
    """Ids listed after an id of the same entity: "项目 64 和 65", "run 12, 13 and 14"."""
    out = list(ids)
    frontier = list(ids)
    while frontier:
        nxt: list[Piece] = []
        for p in frontier:
            ent = catalog.entities.get(p.entity or "")
            spellings = [] if ent is None else [p.entity or "", *ent.synonyms]
            entity_alt = "|".join(compiled(s).pattern for s in spellings)
            id_pat = (
                r"(\d+)(?![\d.])"
                if ent is None or ent.id_regex is None
                else (r"(" + ent.id_regex.pattern + r")(?![\w-])")
            )
            prefix = rf"(?:(?:{entity_alt})\s*#?\s*)?" if entity_alt else ""
            m = re.compile(_JOIN + prefix + id_pat, re.IGNORECASE).match(text, p.end)
            if m and not any(q.start == m.start(1) for q in out):
                piece = Piece(
                    m.start(1), m.end(1), display[m.start(1) : m.end(1)], Kind.ID, entity=p.entity
                )
                out.append(piece)
                nxt.append(piece)
        frontier = nxt
    return out


def candidates(
    text: str,
    display: str,
    catalog: Catalog,
    senses: Mapping[str, tuple[Sense, ...]],
    field_senses: Mapping[str, tuple[Sense, ...]],
    *,
    contains_senses: Mapping[str, tuple[Sense, ...]],
    now: datetime,
) -> list[Piece]:
    found: list[Piece] = list(_catalog_pieces(text, senses, field_senses))
    found.extend(_contains_cues(text, contains_senses))
    ids = list(_id_pieces(text, display, catalog))
    found.extend(_more_ids(text, display, catalog, ids))
    for n in find_numbers(text):
        found.append(Piece(n.start, n.end, text[n.start : n.end], Kind.NUMBER, number=n.value))
    for d in find_dates(text, now):
        span = text[d.start : d.end]
        found.append(
            Piece(
                d.start, d.end, span, Kind.DATE, since=d.since, until=d.until, ends_now=d.ends_now
            )
        )
    found.extend(_regex_pieces(text))
    return found


def choose(found: list[Piece]) -> list[Piece]:
    """Non-overlapping pieces: longest first, then by kind rank."""
    kept: list[Piece] = []
    taken = bytearray(max((p.end for p in found), default=0))
    for p in sorted(found, key=lambda p: (-p.length, _RANK.get(p.kind, 99), p.start)):
        if any(taken[p.start : p.end]):
            continue
        taken[p.start : p.end] = b"\x01" * p.length
        kept.append(p)
    return sorted(kept, key=lambda p: p.start)


def residual(text: str, kept: list[Piece]) -> list[Piece]:
    """Runs of content no piece covers: CJK characters and Latin words, spaces merged."""
    covered = bytearray(len(text))
    for p in kept:
        covered[p.start : p.end] = b"\x01" * p.length
    out: list[Piece] = []
    start: int | None = None
    for i, ch in enumerate([*text, " "]):
        content = i < len(text) and not covered[i] and not _PUNCT_OR_SPACE.match(ch)
        if content and start is None:
            start = i
        elif not content and start is not None:
            out.append(Piece(start, i, text[start:i], Kind.RESIDUAL))
            start = None
    merged: list[Piece] = []
    for p in out:
        if (
            merged
            and text[merged[-1].end : p.start].isspace()
            and p.text.isascii()
            and merged[-1].text.isascii()
        ):
            last = merged.pop()
            merged.append(Piece(last.start, p.end, text[last.start : p.end], Kind.RESIDUAL))
            continue
        merged.append(p)
    return merged
