"""Many-valued facts in answers: every value stated, sets compared as sets.

A fact predicate may hold several values for one object (`ResultRow.facts`:
a tuple per predicate, cut at the executor's bound with the number held in
`facts_cut`). An answer states them all, in the result's order, and says how
many there are when they were cut. A compare tells two subjects apart by the
sets they hold: equal sets (whatever their order, spelling or case) are no
difference, and a difference says what all subjects share and what each has
beyond that (for two subjects: what each has that the other lacks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.result import ResultRow
from qdsl.verifier import Language


def field_of(entity: EntitySpec | None, predicate: str) -> str:
    """The catalog field a fact predicate answers (the predicate when none does)."""
    if entity is not None:
        for name, spec in entity.fields.items():
            if spec.fact == predicate:
                return name
    return predicate


def predicate_of(entity: EntitySpec | None, name: str) -> str:
    """The fact predicate behind a field name (the name itself when it is none)."""
    spec = entity.fields.get(name) if entity is not None else None
    return spec.fact if spec is not None and spec.fact is not None else name


def row_fields(entity: EntitySpec | None, row: ResultRow) -> dict[str, Any]:
    """What a row states, by field name: its values (but the id), then its facts
    (a tuple each) under the name of their field, unless a value holds it already."""
    out = {k: v for k, v in row.values.items() if k != "id"}
    for predicate, values in row.facts.items():
        out.setdefault(field_of(entity, predicate), values)
    return out


def cut_of(entity: EntitySpec | None, row: ResultRow, name: str) -> int | None:
    """How many values the field `name` holds for `row`, when they were cut."""
    return row.facts_cut.get(predicate_of(entity, name))


def listed(values: Sequence[Any], lang: Language, held: int | None = None) -> str:
    """Values as one phrase, with how many there are when only some are listed."""
    text = ("、" if lang == "zh" else ", ").join(str(v) for v in values)
    if held is None or held <= len(values):
        return text
    if lang == "zh":
        return f"{text}（共 {held} 项，列出 {len(values)} 项）"
    return f"{text} ({len(values)} of {held} shown)"


def _normalized(value: Any) -> str:
    return normalize_text(str(value))


def set_difference(
    per_subject: Mapping[str, Sequence[Any]],
    cut: Mapping[str, int],
    key: Callable[[Any], str] | None = None,
) -> dict[str, Any] | None:
    """The difference of the subjects' sets of values, or None when they hold the
    same set (values compared by `key`, by default normalized). `cut`: subjects
    whose values were cut (they are reported, as not compared in full)."""
    _key = key or _normalized
    keys = {s: {_key(v) for v in vals} for s, vals in per_subject.items()}
    if len({frozenset(k) for k in keys.values()}) <= 1 and not cut:
        return None
    shared = set.intersection(*keys.values()) if keys else set()
    first = next(iter(per_subject.values()), ())
    out: dict[str, Any] = {
        "values": {s: list(vals) for s, vals in per_subject.items()},
        "common": [v for v in first if _key(v) in shared],
        "only": {
            s: [v for v in vals if _key(v) not in shared]
            for s, vals in per_subject.items()
            if any(_key(v) not in shared for v in vals)
        },
    }
    if cut:
        out["cut"] = dict(cut)
    return out


def set_difference_text(diff: Mapping[str, Any], lang: Language) -> str:
    """What the subjects share and what each has beyond that, as one phrase."""
    zh = lang == "zh"
    parts: list[str] = []
    many = len(diff["values"]) > 2
    if diff["common"]:
        shared = listed(diff["common"], lang)
        parts.append(f"共同：{shared}" if zh else f"{'all' if many else 'both'}: {shared}")
    for subject, values in diff["only"].items():
        only = listed(values, lang)
        parts.append(f"仅 {subject}：{only}" if zh else f"only {subject}: {only}")
    for subject, values in diff["values"].items():
        if not values:
            parts.append(f"{subject} 没有" if zh else f"{subject}: none")
    for subject, held in diff.get("cut", {}).items():
        shown = len(diff["values"][subject])
        parts.append(
            f"{subject} 共 {held} 项，只比较了 {shown} 项"
            if zh
            else f"{subject} holds {held}, {shown} compared"
        )
    return ("；" if zh else "; ").join(parts)
