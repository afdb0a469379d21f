"""The catalog's own spellings, indexed once per catalog object, and how to find them.

Entity synonyms, field synonyms, enum values and aliases become `Sense`s of a
spelling. Matching runs on `normalize_text(question)`: CJK spellings match with
or without inner spaces ("A 股" = "A股"); Latin spellings only on word
boundaries, with English plurals ("projects", "admins").
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from qdsl.dsl.catalog import Catalog, FieldSpec, FieldType
from qdsl.dsl.ir import Operator
from qdsl.dsl.linking import TenantValues
from qdsl.dsl.question.model import Kind, Sense
from qdsl.dsl.question.required import rare_char
from qdsl.dsl.textnorm import normalize_text

_CJK = re.compile(r"[\u3400-\u9fff]")


def spelling_pattern(spelling: str) -> str:
    norm = normalize_text(spelling)
    parts: list[str] = []
    for i, ch in enumerate(norm):
        if ch in " -":
            parts.append(r"[\s-]*")
            continue
        parts.append(re.escape(ch))
        nxt = norm[i + 1] if i + 1 < len(norm) else ""
        if nxt and nxt not in " -" and (_CJK.match(ch) or _CJK.match(nxt)):
            parts.append(r"\s*")
    body = "".join(parts)
    if norm[:1].isascii() and norm[:1].isalnum():
        body = r"(?<![a-z0-9])" + body
    if norm[-1:].isascii() and norm[-1:].isalpha():
        body += r"(?:e?s)?(?![a-z0-9])"  # English plurals: "admins", "A-shares"
    elif norm[-1:].isascii() and norm[-1:].isalnum():
        body += r"(?![a-z0-9])"
    return body


@lru_cache(maxsize=8192)
def compiled(spelling: str) -> re.Pattern[str]:
    return re.compile(spelling_pattern(spelling))


_SQUEEZE = re.compile(r"[\s-]+")


def squeeze(text: str) -> str:
    """`text` without whitespace and hyphens: what every match of a spelling's
    pattern leaves of itself, so `squeeze(spelling) in squeeze(text)` is a cheap
    necessary condition for the pattern to match anywhere in `text`."""
    return _SQUEEZE.sub("", text)


@lru_cache(maxsize=8192)
def _key(spelling: str) -> str | None:
    """The spelling's squeezed form (None: it normalizes to nothing, never matches)."""
    norm = normalize_text(spelling)
    return squeeze(norm) if norm else None


def could_match(spelling: str, squeezed: str) -> bool:
    """False when `spelling` cannot occur in the text `squeezed` was made from."""
    key = _key(spelling)
    return key is not None and key in squeezed


def present(spellings: Mapping[str, object], squeezed: str) -> list[str]:
    """The spellings of `spellings` (in its order) that `could_match` the text
    `squeezed` was made from. The squeezed forms are computed and indexed once per
    mapping object (lexicons and merged senses are long-lived; the entry holds the
    mapping, so its id stays its own)."""
    hit = _KEYED.get(id(spellings))
    if hit is None or hit.mapping is not spellings or hit.size != len(spellings):
        hit = _Keyed(spellings)
        with _KEYED_LOCK:
            _KEYED[id(spellings)] = hit
            while len(_KEYED) > 256:
                _KEYED.pop(next(iter(_KEYED)))
    return hit.present(squeezed)


class _Keyed:
    """A mapping's spellings with their squeezed forms, each filed under one of its
    characters: a text's own characters name the few spellings worth a substring
    test, rather than one test per spelling."""

    def __init__(self, spellings: Mapping[str, object]) -> None:
        self.mapping, self.size = spellings, len(spellings)
        self.keyed = tuple((sp, k) for sp in spellings if (k := _key(sp)) is not None)
        by_char: dict[str, list[int]] = {}
        for i, (_sp, k) in enumerate(self.keyed):
            by_char.setdefault(rare_char(k) if k else "", []).append(i)
        self.always = tuple(by_char.pop("", ()))  # squeezes to nothing: in every text
        self.by_char = {c: tuple(ix) for c, ix in by_char.items()}

    def present(self, squeezed: str) -> list[str]:
        found = set(self.always)
        by_char = self.by_char
        for c in set(squeezed):
            hit = by_char.get(c)
            if hit is not None:
                found.update(hit)
        keyed = self.keyed
        return [keyed[i][0] for i in sorted(found) if keyed[i][1] in squeezed]


_KEYED: dict[int, _Keyed] = {}
_KEYED_LOCK = threading.Lock()


def find(text: str, spelling: str, squeezed: str | None = None) -> Iterator[tuple[int, int]]:
    if not could_match(spelling, squeeze(text) if squeezed is None else squeezed):
        return
    for m in compiled(spelling).finditer(text):
        if m.end() > m.start():
            yield m.start(), m.end()


@lru_cache(maxsize=8192)
def around(spelling: str, before: str, after: str) -> re.Pattern[str]:
    """`before` + the spelling's pattern + `after`, compiled once per process."""
    return re.compile(before + spelling_pattern(spelling) + after)


@dataclass(frozen=True)
class Lexicon:
    """normalized spelling -> every sense it has in the catalog."""

    senses: dict[str, tuple[Sense, ...]]
    # Field spellings, for absence/presence around a field's name.
    field_spellings: dict[str, tuple[Sense, ...]]
    # Spellings of text fields that allow `contains` ("主题包含…", "subject contains …").
    contains_spellings: dict[str, tuple[Sense, ...]]
    # Verbs a date field's zh name is built on (提交 of 提交时间): they place a date,
    # and alone they only say what happened ("通过在线聊天提交的工单").
    verb_stems: frozenset[str] = frozenset()
    # Every entity's name and synonyms, as written (ids follow them: "项目 64").
    entity_names: dict[str, None] = field(default_factory=dict)


def _add(index: dict[str, list[Sense]], spelling: str, sense: Sense) -> None:
    norm = normalize_text(spelling)
    if norm and sense not in index.setdefault(norm, []):
        index[norm].append(sense)


_TIME_SUFFIX = re.compile(r"(?:时间|日期|时候|时)$")


def _stems(spec: FieldSpec) -> list[str]:
    """The verb a date field's zh name is built on ("提交时间" -> "提交")."""
    out: list[str] = []
    if spec.type in (FieldType.DATE, FieldType.DATETIME):
        for syn in spec.synonyms:
            stem = _TIME_SUFFIX.sub("", syn)
            if stem != syn and len(stem) >= 2 and _CJK.search(stem):
                out.append(stem)
    return out


def _field_spellings(name: str, spec: FieldSpec) -> list[str]:
    """A field's synonyms, its own name (role, "refund amount") and its verb stems."""
    return [*spec.synonyms, name, name.replace("_", " "), *_stems(spec)]


def build_lexicon(catalog: Catalog) -> Lexicon:
    index: dict[str, list[Sense]] = {}
    fields: dict[str, list[Sense]] = {}
    texts: dict[str, list[Sense]] = {}
    stems: set[str] = set()
    for ename, ent in catalog.entities.items():
        for spelling in (ename, *ent.synonyms):
            _add(index, spelling, Sense(Kind.ENTITY, ename))
        for fname, spec in ent.fields.items():
            if spec.sensitive:
                continue
            stems.update(normalize_text(s) for s in _stems(spec))
            for spelling in _field_spellings(fname, spec):
                sense = Sense(Kind.FIELD, ename, fname)
                _add(index, spelling, sense)
                _add(fields, spelling, sense)
                if spec.type is FieldType.TEXT and Operator.CONTAINS in spec.operators:
                    _add(texts, spelling, sense)
            values = dict.fromkeys((*spec.values, *spec.aliases))
            for canonical in values:
                for spelling in (canonical, *spec.aliases.get(canonical, ())):
                    _add(index, spelling, Sense(Kind.VALUE, ename, fname, canonical))
        for mname, m in ent.measures.items():
            # a measure of rows is a count question, which the count kind answers
            if m.function is not None and m.field is None:
                continue
            for spelling in (*m.synonyms, mname.replace("_", " ")):
                _add(index, spelling, Sense(Kind.AGGREGATE, ename, value=mname))
    return Lexicon(
        senses={k: tuple(v) for k, v in index.items()},
        field_spellings={k: tuple(v) for k, v in fields.items()},
        contains_spellings={k: tuple(v) for k, v in texts.items()},
        verb_stems=frozenset(stems),
        entity_names=dict.fromkeys(
            sp for ename, ent in catalog.entities.items() for sp in (ename, *ent.synonyms)
        ),
    )


_CACHE: dict[int, tuple[weakref.ref[Catalog], Lexicon]] = {}


def lexicon_for(catalog: Catalog) -> Lexicon:
    """The catalog's lexicon, built once per live catalog object (checked by identity)."""
    hit = _CACHE.get(id(catalog))
    if hit is not None and hit[0]() is catalog:
        return hit[1]
    lex = build_lexicon(catalog)
    _CACHE[id(catalog)] = (weakref.ref(catalog), lex)
    weakref.finalize(catalog, _CACHE.pop, id(catalog), None)
    return lex


def senses_with(lex: Lexicon, values: TenantValues | None) -> dict[str, tuple[Sense, ...]]:
    """The lexicon's senses with a tenant's linked values added, merged once per
    (lexicon, values) pair: a value source hands out the same read-only mapping
    until its values change, so the merge is not redone per question."""
    if not values:
        return lex.senses
    key = (id(lex), id(values))
    hit = _MERGED.get(key)
    # The entry holds both objects, so neither id can be reused while it lives.
    if hit is not None and hit[0] is lex and hit[1] is values and hit[2] == len(values):
        return hit[3]
    senses = dict(lex.senses)
    for spelling, linked in linked_senses(values).items():
        senses[spelling] = tuple(dict.fromkeys((*senses.get(spelling, ()), *linked)))
    with _MERGED_LOCK:
        _MERGED[key] = (lex, values, len(values), senses)
        while len(_MERGED) > 64:
            _MERGED.pop(next(iter(_MERGED)))
    return senses


_MERGED: dict[tuple[int, int], tuple[Lexicon, TenantValues, int, dict[str, tuple[Sense, ...]]]] = {}
_MERGED_LOCK = threading.Lock()


def linked_senses(values: TenantValues) -> dict[str, tuple[Sense, ...]]:
    """A tenant's linkable values as senses (one per field that holds the value)."""
    out: dict[str, tuple[Sense, ...]] = {}
    for norm, linked in values.items():
        senses = tuple(
            dict.fromkeys(Sense(Kind.LINKED, lv.entity, lv.field, lv.value) for lv in linked)
        )
        if senses and normalize_text(norm):
            out[normalize_text(norm)] = senses
    return out


def field_types(catalog: Catalog, entity: str, *types: FieldType) -> list[str]:
    ent = catalog.entities.get(entity)
    if ent is None:
        return []
    return [n for n, f in ent.fields.items() if f.type in types and not f.sensitive]
