"""A row's own facts as values: every distinct value of each predicate, bounded.

`entity_facts` hands the flow each row's facts ordered by predicate and
`value_norm` (byte order); `fact_sets` makes them `ResultRow.facts`: per
predicate its first `FACT_VALUES_CAP` distinct values, how many it holds when
it holds more (`facts_cut`), and the facts behind the values kept (the row's
evidence: a value stated is backed by every fact stating it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from qdsl.dsl.catalog import AliasGroup
from qdsl.executor.compile import FACT_VALUES_CAP

Row = Sequence[Any]


class FactColumns(Protocol):
    """Where a fact's columns are in the rows (`flow._Facts`)."""

    predicate: Callable[[Row], Any]
    value_text: Callable[[Row], Any]
    value_norm: Callable[[Row], Any]

    def held(self, row: Row) -> int | None: ...


def fact_sets(
    at: FactColumns, facts: Sequence[Row], groups: Mapping[str, Mapping[str, AliasGroup]]
) -> tuple[dict[str, tuple[str, ...]], dict[str, int], list[Row]]:
    """Per predicate, its first `FACT_VALUES_CAP` distinct values (by value_norm,
    in the statement's order); for predicates holding more, how many they hold;
    and the facts behind the values kept (the row's evidence).

    Spellings of one alias group of the predicate's field are one value, written
    as its canonical value; other values are told apart by `value_norm` and
    written as their first fact writes them. Rows of the ranked statement say
    how many values their predicate holds beyond those read."""
    seen: dict[str, dict[str, str]] = {}
    norms: dict[str, set[str]] = {}
    over: dict[str, set[str]] = {}  # distinct values past the cap (read, not kept)
    ranked: dict[str, int] = {}  # how many the ranked statement says a predicate holds
    kept: list[Row] = []
    for f in facts:
        predicate, norm = at.predicate(f), at.value_norm(f)
        known = norms.get(predicate)
        if known is None:
            known = norms[predicate] = set()
            seen[predicate] = {}
        if norm not in known:
            if len(known) >= FACT_VALUES_CAP:
                over.setdefault(predicate, set()).add(norm)
                continue
            known.add(norm)
        n = at.held(f)
        if n is not None:
            ranked[predicate] = n
        kept.append(f)
        group = found.get(norm) if (found := groups.get(predicate)) is not None else None
        key, text = ("=" + group[0], group[0]) if group is not None else (norm, at.value_text(f))
        seen[predicate].setdefault(key, text)
    cut: dict[str, int] = {}
    for predicate, known in norms.items():
        total = max(len(known) + len(over.get(predicate, ())), ranked.get(predicate, 0))
        if total > len(known):
            cut[predicate] = total
    return {p: tuple(v.values()) for p, v in seen.items()}, cut, kept
