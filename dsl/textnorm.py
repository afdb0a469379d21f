"""Value normalization shared by the normalizer, the facts writer and the executor.

A filter value and a stored `semantic_facts.value_norm` must be normalized by
the same function, or an alias lookup silently misses.
"""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def normalize_text(value: str) -> str:
    """NFKC (full-width to half-width), casefold, trim, collapse inner whitespace."""
    folded = unicodedata.normalize("NFKC", value).casefold()
    # casefold can leave decomposed forms (e.g. 'ß' -> 'ss' is fine, but some
    # compatibility characters recompose only after a second NFKC pass).
    folded = unicodedata.normalize("NFKC", folded)
    return _SPACES.sub(" ", folded).strip()
