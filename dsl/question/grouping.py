"""What a counting question groups by: a field after 按 / "by" / 每个 / 各 / "per", or a
calendar period (每月, "monthly", "per month", 按季度).

A field groups only a question that counts (`measures.place` decides when), and
only a field the catalog lets a breakdown group by (`dsl.kinds.breakdown.groupable`).
A period names the entity's one date field whose catalog `grains` list it; with
several such fields the question is ambiguous, with none it asks for what this
entity cannot answer: either way a `Problem`, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds.breakdown import groupable
from qdsl.dsl.question.conditions import Builder

# a grain word right after a per-word or 按 / "by" ("每月", "按季度", "per month")
_ZH_GRAINS = {"天": Grain.DAY, "日": Grain.DAY, "周": Grain.WEEK, "星期": Grain.WEEK}
_ZH_GRAINS |= {"月": Grain.MONTH, "季度": Grain.QUARTER, "季": Grain.QUARTER, "年": Grain.YEAR}
_EN_GRAINS = {g.value: g for g in Grain}
_ADVERBS = {"daily": Grain.DAY, "weekly": Grain.WEEK, "monthly": Grain.MONTH}
_ADVERBS |= {"quarterly": Grain.QUARTER, "yearly": Grain.YEAR, "annually": Grain.YEAR}

_ZH = re.compile(r"(?:每|按|各)(?:一)?(?:个)?(季度|星期|天|日|周|月|季|年)(?:度)?")
_EN = re.compile(
    r"\b(?:per|by|each|every|a) (day|week|month|quarter|year)\b"
    r"|\b(daily|weekly|monthly|quarterly|yearly|annually)\b"
)

Key = tuple[str, Grain | None]


@dataclass(frozen=True)
class Period:
    """A period word of the question: where it stands and the grain it names."""

    start: int
    end: int
    text: str
    grain: Grain


def periods(text: str) -> list[Period]:
    out = [
        Period(m.start(), m.end(), m.group(), _ZH_GRAINS[m.group(1)]) for m in _ZH.finditer(text)
    ]
    for m in _EN.finditer(text):
        grain = _EN_GRAINS[m.group(1)] if m.group(1) else _ADVERBS[m.group(2)]
        out.append(Period(m.start(), m.end(), m.group(), grain))
    return out


def timed_fields(ent: EntitySpec, grain: Grain) -> list[str]:
    """The date fields of `ent` a breakdown may group by `grain`."""
    allowed = set(groupable(ent))
    return [n for n, f in ent.fields.items() if n in allowed and grain in f.grains]


def period_key(b: Builder, ent: EntitySpec, period: Period) -> Key | None:
    """The grouping a period word names, or None with a Problem saying why not."""
    found = timed_fields(ent, period.grain)
    if len(found) == 1:
        return (found[0], period.grain)
    if found:
        b.problem(period.text, "ambiguous", tuple(found), "grouping")
    else:
        b.problem(period.text, "unsupported", (), "grouping")
    return None


def field_key(ent: EntitySpec, field: str | None, related: Collection[str] = ()) -> Key | None:
    """A field a breakdown groups by its value (a datetime only by a period: None), or
    a grouping across relations the reader found (`related_groups`)."""
    if field is not None and field in related:
        return (field, None)
    if field is None or field not in groupable(ent) or ent.fields[field].type == "datetime":
        return None
    return (field, None)
