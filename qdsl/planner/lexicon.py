"""What a question mentions, read against the catalog: entities, values, ids.

Matching runs on normalize_text(question). CJK spellings match with or without
inner spaces ("A 股" = "A股"); Latin spellings only on word boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.textnorm import normalize_text

_CJK = re.compile(r"[\u3400-\u9fff]")
_NEGATION = re.compile(r"(?:没有?|未|不是?|非|还没|尚未)\s*$|(?:\bnot|n't|\bnon-?)\s*$")
# Questions that contain a negation word but ask yes/no: "有没有", "是不是".
_ASKING = re.compile(r"(?:有没有|是不是|有无|是否|存不存在)\s*$")


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    entity: str
    field: str | None = None  # None: the entity itself is named
    value: str | None = None  # the canonical value the alias stands for
    negated: bool = False

    @property
    def length(self) -> int:
        return self.end - self.start


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
        # English plurals: "admins", "A-shares", "projects".
        body += r"(?:e?s)?(?![a-z0-9])"
    elif norm[-1:].isascii() and norm[-1:].isalnum():
        body += r"(?![a-z0-9])"
    return body


@lru_cache(maxsize=4096)
def _compiled(spelling: str) -> re.Pattern[str]:
    return re.compile(spelling_pattern(spelling))


def _find(text: str, spelling: str) -> list[tuple[int, int]]:
    if not normalize_text(spelling):
        return []
    return [(m.start(), m.end()) for m in _compiled(spelling).finditer(text)]


def find_mentions(text: str, catalog: Catalog) -> list[Mention]:
    """Entity names and field values named in `text`, longest spellings winning overlaps."""
    found: list[Mention] = []
    for ename, ent in catalog.entities.items():
        for spelling in {ename, *ent.synonyms}:
            found.extend(Mention(s, e, ename) for s, e in _find(text, spelling))
        for fname, field in ent.fields.items():
            if field.sensitive:
                continue
            for canonical, aliases in field.aliases.items():
                for spelling in {canonical, *aliases}:
                    for s, e in _find(text, spelling):
                        before = text[max(0, s - 5) : s]
                        neg = bool(_NEGATION.search(before)) and not _ASKING.search(before)
                        found.append(Mention(s, e, ename, fname, canonical, neg))
    kept: list[Mention] = []
    for m in sorted(found, key=lambda m: (-m.length, m.start)):
        if any(k.start < m.end and m.start < k.end and k.length > m.length for k in kept):
            continue
        kept.append(m)
    return sorted(kept, key=lambda m: m.start)


def find_ids(text: str, catalog: Catalog) -> dict[str, list[str]]:
    """Ids written after an entity's name ("项目 64", "project 64", "run #12")."""
    ids: dict[str, list[str]] = {}
    for ename, ent in catalog.entities.items():
        for spelling in sorted({ename, *ent.synonyms}, key=len, reverse=True):
            pattern = _compiled(spelling).pattern + r"\s*(?:#|no\.?\s*|id\s*|编号\s*)?(\d+)"
            for m in re.finditer(pattern, text):
                bucket = ids.setdefault(ename, [])
                if m.group(1) not in bucket:
                    bucket.append(m.group(1))
    return ids


_BARE = re.compile(r"(?<![0-9a-z.#:_-])(\d+)(?![0-9a-z.:_%-])")


def bare_numbers(text: str) -> list[str]:
    return list(dict.fromkeys(_BARE.findall(text)))
