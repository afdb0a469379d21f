"""An aggregate answers the measure its question asks: the same function over the
same field, or the same declared measure (a declared one and the function over
the field it names are one measure: "average payment" is avg(amount)).

Part of `question_covered`: a sum answered as an average, a maximum as a sum, a
measure over another field than the one asked, or a declared ratio answered as
some other aggregate is refused like a missing condition; so is a breakdown
computing another measure per group than its question asks (a count where a sum
per group was asked, a sum where the groups were to be counted).
"""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.ir import Measure, Plan, QueryType
from qdsl.dsl.question import Reading

# (function, field) of an aggregate, or ("ratio", its name)
Meaning = tuple[str, str | None]


def _meaning(
    ent: EntitySpec | None, function: str | None, field: str | None, name: str | None
) -> Meaning:
    if name is not None:
        m = ent.measures.get(name) if ent is not None else None
        if m is None or m.is_ratio or m.function is None:
            return ("ratio", name)
        if m.times is not None:
            # a product is not its first factor's aggregate: sum(quantity) is no revenue
            return (m.function.value, f"{m.field} × {m.times}")
        return (m.function.value, m.field)
    return (function or "sum", field)


def _shown(meaning: Meaning) -> str:
    function, what = meaning
    return str(what) if function == "ratio" else f"{function}({what or ''})"


def _of_plan(ent: EntitySpec | None, m: Measure) -> Meaning:
    return _meaning(ent, None if m.function is None else m.function.value, m.field, m.name)


_COUNTED: Meaning = ("count", None)


def measure_issues(reading: Reading, plan: Plan, ent: EntitySpec | None) -> Iterator[str]:
    zh = reading.language == "zh"
    field = reading.projection[0] if reading.projection else None
    if reading.query_type is QueryType.BREAKDOWN and plan.query_type is QueryType.BREAKDOWN:
        # a breakdown counts its groups' rows unless its question asks a measure of them
        asks = reading.function is not None or reading.measure is not None
        asked = _meaning(ent, reading.function, field, reading.measure) if asks else _COUNTED
        stated = _COUNTED if plan.measure is None else _of_plan(ent, plan.measure)
        if stated != asked:
            yield (
                f"问题按组问的是 {_shown(asked)}，计划每组计算的是 {_shown(stated)}"
                if zh
                else f"the question asks {_shown(asked)} per group, "
                f"the plan computes {_shown(stated)}"
            )
        return
    if reading.query_type is not QueryType.AGGREGATE or plan.query_type is not QueryType.AGGREGATE:
        return
    asked = _meaning(ent, reading.function, field, reading.measure)
    if plan.measure is None:
        yield "计划没有说明要计算的度量" if zh else "the plan states no measure"
        return
    stated = _of_plan(ent, plan.measure)
    if stated != asked:
        yield (
            f"问题问的是 {_shown(asked)}，计划计算的是 {_shown(stated)}"
            if zh
            else f"the question asks for {_shown(asked)}, the plan computes {_shown(stated)}"
        )
