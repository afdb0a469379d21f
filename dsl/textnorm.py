"""Value normalization shared by the normalizer, the facts writer and the executor.

A filter value and a stored `semantic_facts.value_norm` must be normalized by
the same function, or an alias lookup silently misses.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_SPACES = re.compile(r"\s+")


def normalize_text(value: str) -> str:
    """NFKC (full-width to half-width), casefold, trim, collapse inner whitespace."""
    # Catalog spellings, plan values and question words recur: short ones are
    # remembered (a bounded cache; long text is never kept).
    if len(value) <= _SHORT:
        return _normalize_short(value)
    return _normalize(value)


_SHORT = 64


def _normalize(value: str) -> str:
    folded = unicodedata.normalize("NFKC", value).casefold()
    # casefold can leave decomposed forms (e.g. 'ß' -> 'ss' is fine, but some
    # compatibility characters recompose only after a second NFKC pass).
    folded = unicodedata.normalize("NFKC", folded)
    return _SPACES.sub(" ", folded).strip()


_normalize_short = lru_cache(maxsize=8192)(_normalize)
