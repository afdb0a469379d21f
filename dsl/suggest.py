"""Did-you-mean suggestions for names a plan got wrong.

Used for entities, fields, operators, sort fields and enum values: every unknown
name fails closed, and the error says which known names are close to it.
Matching is case-insensitive but suggestions are returned as the catalog
spells them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import get_close_matches

from qdsl.dsl.textnorm import normalize_text

DEFAULT_CUTOFF = 0.6
DEFAULT_COUNT = 3


def suggest(
    word: str,
    candidates: Iterable[str] | Mapping[str, str],
    *,
    n: int = DEFAULT_COUNT,
    cutoff: float = DEFAULT_CUTOFF,
) -> tuple[str, ...]:
    """Up to `n` known names close to `word`, best first, without duplicates.

    `candidates` may map a spelling to what it stands for (a synonym to its
    entity key, an alias to its canonical value): the spelling is matched and
    the target is suggested.
    """
    targets: dict[str, str] = {}
    pairs = candidates.items() if isinstance(candidates, Mapping) else ((c, c) for c in candidates)
    for spelling, target in pairs:
        targets.setdefault(normalize_text(spelling), target)
    found = get_close_matches(normalize_text(word), list(targets), n=len(targets), cutoff=cutoff)
    out: list[str] = []
    for key in found:
        target = targets[key]
        if target not in out:
            out.append(target)
        if len(out) == n:
            break
    return tuple(out)


def did_you_mean(suggestions: tuple[str, ...], known: Iterable[str], what: str) -> str:
    """A hint naming the best suggestion, or listing the known names when none is close."""
    if suggestions:
        return f'did you mean "{suggestions[0]}"?'
    names = sorted(set(known))
    return f"known {what}: {', '.join(names)}" if names else f"there are no {what}"
