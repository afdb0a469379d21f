"""What text a regular expression needs before it can match: a cheap skip.

The question reader runs some two hundred fixed patterns (cues, comparisons,
sorts, limits) over every question; most cannot match it, and a `finditer`
that finds nothing still costs a call. `requirement(pattern)` reads the
pattern once and returns literal strings any match must contain: clauses,
each a tuple of alternatives, all clauses needed ("有什么区别" needs
"有什么区别"; `\\bvs\\.?` needs "vs"; `按照?` needs "按"). `may_match` tests
them with `in`. It is only ever a necessary condition: a pattern it passes is
run as before, so what is found does not change.

The pattern is read with the standard library's own regex parser
(`re._parser`). Anything it does not know, and any case-insensitive pattern,
gives no requirement: the pattern then always runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# One clause: at least one of its strings occurs in the text.
Clause = tuple[str, ...]
Requirement = tuple[Clause, ...]

_MAX_CLAUSES = 3
_MAX_ALTERNATIVES = 6
_MAX_CLASS = 32  # a character class of more characters is no useful clause


def requirement(pattern: re.Pattern[str]) -> Requirement:
    """Clauses every match of `pattern` satisfies (empty: no requirement known)."""
    if pattern.flags & re.IGNORECASE:
        return ()
    try:
        from re import _parser

        parsed = _parser.parse(pattern.pattern, pattern.flags)
        clauses = _sequence(list(parsed))
    except Exception:  # an unreadable pattern simply always runs
        return ()
    if clauses is None:
        return ()
    # A clause of many alternatives costs more to test in Python than the
    # pattern's own search does in C.
    useful = {c for c in clauses if len(c) <= _MAX_ALTERNATIVES}
    best = sorted(useful, key=lambda c: (-min(map(len, c)), len(c), c))
    return tuple(best[:_MAX_CLAUSES])


def may_match(req: Requirement, text: str) -> bool:
    """False only when no match of the pattern `req` was read from can be in `text`."""
    for clause in req:
        if len(clause) == 1:
            if clause[0] not in text:
                return False
        elif not any(s in text for s in clause):
            return False
    return True


# English letters, rarest first: the key a Latin clause is indexed under.
_RARE_FIRST = "zqxjkvbpygfwmucldrhsnioate"


def rare_char(s: str) -> str:
    """The character a non-empty `s` is indexed under: one unlikely to be in every
    text (a text without it cannot hold `s`)."""
    other = [c for c in s if not c.isascii()]
    if other:
        return other[-1]
    letters = [c for c in s if c in _RARE_FIRST]
    return min(letters, key=_RARE_FIRST.index) if letters else s[0]


class PatternIndex:
    """A fixed list of patterns, and which of them may match a given text.

    Each pattern is filed under one character of each alternative of its
    strongest clause; a text's own characters then name the few patterns worth
    testing, in one dict lookup each, instead of one test per pattern."""

    def __init__(self, patterns: Sequence[re.Pattern[str]]) -> None:
        self.patterns = tuple(patterns)
        self._needs = tuple(requirement(p) for p in self.patterns)
        self._always = frozenset(i for i, req in enumerate(self._needs) if not req)
        by_char: dict[str, set[int]] = {}
        for i, req in enumerate(self._needs):
            if req:
                for alt in req[0]:
                    by_char.setdefault(rare_char(alt), set()).add(i)
        self._by_char = {c: frozenset(ix) for c, ix in by_char.items()}

    def candidates(self, text: str) -> list[int]:
        """The places, in order, of the patterns that may match `text`
        (`may_match`): every other one cannot."""
        found = set(self._always)
        by_char = self._by_char
        for c in set(text):
            hit = by_char.get(c)
            if hit is not None:
                found |= hit
        needs = self._needs
        return sorted(i for i in found if may_match(needs[i], text))


def _sequence(items: list[tuple[Any, Any]]) -> list[Clause] | None:
    """The clauses of a sequence: each literal run, and what each item needs
    (None: the pattern is outside what is read here)."""
    from re import _constants as C

    clauses: list[Clause] = []
    run: list[str] = []
    for op, arg in items:
        if op is C.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            clauses.append(("".join(run),))
            run.clear()
        sub = _item(op, arg)
        if sub is None:
            return None
        clauses.extend(sub)
    if run:
        clauses.append(("".join(run),))
    return clauses


def _item(op: Any, arg: Any) -> list[Clause] | None:
    """What one item other than a literal needs."""
    from re import _constants as C

    if op is C.SUBPATTERN:
        _group, add_flags, _del_flags, inner = arg
        return None if add_flags & re.IGNORECASE else _sequence(list(inner))
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, _high, inner = arg
        return _sequence(list(inner)) if low >= 1 else []
    if op is C.ATOMIC_GROUP:
        return _sequence(list(arg))
    if op is C.BRANCH:
        return _branch(arg[1])
    if op is C.IN:
        return _char_class(arg)
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT, C.ANY, C.NOT_LITERAL, C.CATEGORY):
        return []  # needs no particular character
    return None


def _branch(alternatives: list[Any]) -> list[Clause] | None:
    """One clause of alternatives: the strongest clause of each branch."""
    chosen: list[str] = []
    for alt in alternatives:
        sub = _sequence(list(alt))
        if sub is None:
            return None
        if not sub:
            return []  # a branch that needs nothing: the whole needs nothing
        best = max(sub, key=lambda c: (min(map(len, c)), -len(c)))
        chosen.extend(best)
    return [tuple(dict.fromkeys(chosen))]


def _char_class(items: list[tuple[Any, Any]]) -> list[Clause] | None:
    from re import _constants as C

    chars: list[str] = []
    for op, arg in items:
        if op is C.LITERAL:
            chars.append(chr(arg))
        elif op is C.RANGE and arg[1] - arg[0] < _MAX_CLASS:
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        else:
            return []  # NEGATE, a category, a wide range: no useful clause
    if not chars or len(chars) > _MAX_CLASS:
        return []
    return [tuple(dict.fromkeys(chars))]
