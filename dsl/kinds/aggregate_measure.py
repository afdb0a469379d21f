"""An aggregate plan's measure as its statements compute it, and as its answer names it.

The normalizer (`qdsl.dsl.normalize.measure`) has already checked the measure
against the catalog; here a declared measure is looked up for its function (or
its ratio's two parts) and each part becomes one SQL aggregate. Functions are
compared by value: this module is imported while the IR is (kinds are part of
it), so it cannot import the IR's enums at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qdsl.dsl.catalog import EntitySpec, MeasureSpec
    from qdsl.dsl.ir import Measure

RATIO = "ratio"
# a function's words in an answer: (zh, en)
_WORDS: dict[str, tuple[str, str]] = {
    "sum": ("合计", "Total"),
    "avg": ("平均", "Average"),
    "min": ("最低", "Minimum"),
    "max": ("最高", "Maximum"),
    "count": ("数量", "Number"),
    "count_distinct": ("不同值数", "Number of distinct"),
}


@dataclass(frozen=True)
class Part:
    """One SQL aggregate: `function` over `field` (× `times`, a declared product), or
    over the rows (`count`)."""

    function: str
    field: str | None
    times: str | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The columns the part reads, each once."""
        named = (self.field, self.times)
        return tuple(dict.fromkeys(f for f in named if f is not None))


@dataclass(frozen=True)
class Computed:
    """What a plan's measure computes: one part, or a ratio's numerator and denominator."""

    function: str  # an aggregation's value, or "ratio": what `data.function` reports
    field: str | None  # the field the cited rows carry; None: the rows, a ratio, a product
    name: str | None  # the declared measure the plan named, if it named one
    parts: tuple[Part, ...]

    @property
    def product(self) -> Part | None:
        """The one part when it multiplies two fields: its cited rows carry the product."""
        part = self.parts[0]
        return part if len(self.parts) == 1 and part.times is not None else None

    @property
    def label(self) -> str | None:
        """What `data.measure` names: the declared measure, else the field."""
        return self.name or self.field


def _part(m: MeasureSpec) -> Part:
    assert m.function is not None  # the catalog checks refuse a measure without one
    return Part(str(m.function), m.field, m.times)


def computed(spec: EntitySpec, measure: Measure) -> Computed:
    if measure.name is not None:
        m = spec.measures[measure.name]
        if m.is_ratio:
            assert m.numerator is not None and m.denominator is not None
            parts = (_part(spec.measures[m.numerator]), _part(spec.measures[m.denominator]))
            return Computed(RATIO, None, measure.name, parts)
        part = _part(m)
        # a product is over no one field: the answer names the measure, as a ratio's does
        field = part.field if part.times is None else None
        return Computed(part.function, field, measure.name, (part,))
    assert measure.function is not None  # the IR holds a name or a function
    part = Part(str(measure.function), measure.field)
    return Computed(part.function, part.field, None, (part,))


def part_value(part: Part, column: Callable[[str], Any]) -> Any:
    """The value a row gives the part: its field's column (`column(field)`), the two
    columns multiplied for a product (NULL in either: no value), None to count rows."""
    if part.field is None:
        return None
    if part.times is None:
        return column(part.field)
    return column(part.field) * column(part.times)


def sql_aggregate(sql: Any, part: Part, column: Any) -> Any:
    """The part's SQL aggregate over `column` (None: the rows)."""
    if column is None:
        return sql.func.count()
    if part.function == "count_distinct":
        return sql.func.count(sql.distinct(column))
    functions = {"sum": sql.func.sum, "avg": sql.func.avg, "min": sql.func.min}
    return functions.get(part.function, sql.func.max)(column)


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """The ratio's value: none when either part is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def measure_words(function: str, zh: bool) -> str:
    zh_word, en_word = _WORDS.get(function, ("", ""))
    return zh_word if zh else en_word


def declared_label(m: MeasureSpec, name: str, zh: bool) -> str:
    """A declared measure's name in the answer's language: its first synonym written
    in that language (CJK or not), else its catalog name."""
    for word in m.synonyms:
        if any("\u4e00" <= ch <= "\u9fff" for ch in word) == zh:
            return word
    return name.replace("_", " ")
