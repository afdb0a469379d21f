"""Breakdown questions about a generated deployment: how many objects per value of one
field, or per month / year of its one time field; the oracle's groups; the judge.

A question names a column field by one of its nouns (每个X有多少Y, 各X的Y数,
按X统计Y, "How many Y per X?", "How many Y are there by X?", "a breakdown of Y by
X") or a period (每月有多少Y, "How many Y per month?", 每年…, "yearly"). The
oracle counts the tenant's rows per stored value (NULL its own group) or per
UTC calendar month / year (generated catalogs keep the default zone); the judge
wants exactly those groups, their counts and the total, keys read by meaning.

A third of the questions where the entity has a number column ask a measure of it
per group instead (各X的Y合计, 按X统计平均Y, "What is the total Y per X?", "the
average Y by X", 每月的Y合计, "the monthly total Y"): the oracle sums or averages
the group's values (NULL is no value; a group of none has none), the total over
every row, and the judge wants those values within float rounding.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Any

from generated.measures_judge import measure_of, near
from generated.model import Field
from generated.periods import moment_of
from generated.questions import At, Question, _nouns, _pick
from hypothesis import strategies as st

GROUP_TEMPLATES = {
    "zh": ("每个{f}有多少{p}", "各{f}的{p}数", "按{f}统计{p}"),
    "en": (
        "How many {p} per {f}?",
        "How many {p} are there by {f}?",
        "Give me a breakdown of {p} by {f}",
    ),
}
PERIOD_TEMPLATES = {
    ("zh", "month"): ("每月有多少{p}", "每个月有多少{p}"),
    ("zh", "year"): ("每年有多少{p}",),
    ("en", "month"): ("How many {p} per month?", "monthly count of {p}"),
    ("en", "year"): ("How many {p} per year?",),
}
GRAINS = ("month", "year")
# a measure of a number field ({m}) per group, or per period
MEASURE_TEMPLATES = {
    ("zh", "sum"): ("各{f}的{m}合计是多少", "每个{f}的{m}总和", "按{f}统计{m}合计"),
    ("zh", "avg"): ("各{f}的平均{m}是多少", "按{f}统计平均{m}"),
    ("en", "sum"): ("What is the total {m} per {f}?", "total {m} by {f}"),
    ("en", "avg"): ("What is the average {m} per {f}?", "the average {m} by {f}"),
}
MEASURE_PERIOD_TEMPLATES = {
    ("zh", "sum"): ("每月的{m}合计是多少",),
    ("zh", "avg"): ("每月的平均{m}是多少",),
    ("en", "sum"): ("What is the total {m} per month?",),
    ("en", "avg"): ("What is the average {m} per month?",),
}


def _groupable(f: Field) -> bool:
    return f.sql is not None and f.kind in ("enum", "text", "bool", "number", "date")


@st.composite
def breakdown_question(draw: st.DrawFn, at: At) -> Question | None:
    noun = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
    timed = [f for f in at.ent.fields if f.sql is not None and f.kind in ("date", "datetime")]
    numbers = [
        f
        for f in at.ent.fields
        if f.sql is not None and f.kind == "number" and _nouns(f.concept, at.lang)
    ]
    if numbers and draw(st.integers(0, 2)) == 0:
        measured = draw(_measured(at, numbers, timed))
        if measured is not None:
            return measured
    # a period when the entity has the one date field a period word can mean, three
    # times in four: few generated entities have exactly one
    if len(timed) == 1 and draw(st.integers(0, 3)):
        grain = draw(st.sampled_from(GRAINS))
        text = _pick(draw, PERIOD_TEMPLATES[at.lang, grain]).format(p=noun)
        tags = frozenset({f"group:{timed[0].name}", f"grain:{grain}", "period"})
        return Question(text, at.lang, "breakdown", at.ent.name, at.tenant, tags=tags)
    fields = [f for f in at.ent.fields if _groupable(f) and _nouns(f.concept, at.lang)]
    if not fields:
        return None
    f = draw(st.sampled_from(fields))
    name = _pick(draw, _nouns(f.concept, at.lang))
    text = _pick(draw, GROUP_TEMPLATES[at.lang]).format(f=name, p=noun)
    tags = frozenset({f"group:{f.name}"})
    return Question(text, at.lang, "breakdown", at.ent.name, at.tenant, tags=tags)


@st.composite
def _measured(draw: st.DrawFn, at: At, numbers: list[Field], timed: list[Field]) -> Question | None:
    m = draw(st.sampled_from(numbers))
    function = draw(st.sampled_from(["sum", "avg"]))
    word = _pick(draw, _nouns(m.concept, at.lang))
    tags = {f"field:{m.name}", f"function:{function}", "measured"}
    if len(timed) == 1 and draw(st.booleans()):
        text = _pick(draw, MEASURE_PERIOD_TEMPLATES[at.lang, function]).format(m=word)
        tags |= {f"group:{timed[0].name}", "grain:month", "period"}
        return Question(text, at.lang, "breakdown", at.ent.name, at.tenant, tags=frozenset(tags))
    fields = [
        f for f in at.ent.fields if f is not m and _groupable(f) and _nouns(f.concept, at.lang)
    ]
    if not fields:
        return None
    f = draw(st.sampled_from(fields))
    name = _pick(draw, _nouns(f.concept, at.lang))
    text = _pick(draw, MEASURE_TEMPLATES[at.lang, function]).format(f=name, m=word)
    tags.add(f"group:{f.name}")
    return Question(text, at.lang, "breakdown", at.ent.name, at.tenant, tags=frozenset(tags))


def related_group(q: Question) -> str | None:
    """What a breakdown across a relation groups by: `relation` or `relation.field`."""
    if "rel:group_field" in q.tags or "rel:group_object" in q.tags:
        return _tag(q, "group:")
    return None


def _tag(q: Question, prefix: str) -> str | None:
    return next((t.removeprefix(prefix) for t in q.tags if t.startswith(prefix)), None)


def _period(value: Any, grain: str) -> str | None:
    moment = moment_of(value)
    if moment is None:
        return None
    day = moment.date() if isinstance(moment, datetime) else moment
    assert isinstance(day, date)
    return f"{day.year}-{day.month:02d}" if grain == "month" else str(day.year)


def groups(rows: list[dict[str, Any]], q: Question) -> Counter[Any]:
    """The tenant's rows counted per group key."""
    name, grain = _tag(q, "group:"), _tag(q, "grain:")
    assert name is not None
    if grain is not None:
        return Counter(_period(r.get(name), grain) for r in rows)
    return Counter(r.get(name) for r in rows)


def _key(r: dict[str, Any], q: Question) -> Any:
    name, grain = _tag(q, "group:"), _tag(q, "grain:")
    assert name is not None
    return _period(r.get(name), grain) if grain is not None else r.get(name)


def measured_problems(
    rows: list[dict[str, Any]], q: Question, data: dict[str, Any], kind: str, same: Any
) -> list[str]:
    """What a measure per group states other than the oracle's: the function, each
    group's value over its rows, the total over every row."""
    field, function = _tag(q, "field:"), _tag(q, "function:")
    assert field is not None and function is not None
    if (data.get("function"), data.get("measure")) != (function, field):
        return [
            f"computes {data.get('function')}({data.get('measure')}), asked {function}({field})"
        ]
    values: dict[Any, list[Any]] = {}
    for r in rows:
        values.setdefault(_key(r, q), []).append(r.get(field))
    want = {k: measure_of(function, [v for v in vs if v is not None]) for k, vs in values.items()}
    every = [r.get(field) for r in rows if r.get(field) is not None]
    out: list[str] = []
    if not near(data.get("total"), measure_of(function, every)):
        out.append(f"total {data.get('total')!r}, the rows hold {measure_of(function, every)}")
    if data.get("truncated"):
        out.append("groups cut (the generated rows hold fewer than the default limit)")
    period = _tag(q, "grain:") is not None
    left = dict(want)
    for g in data.get("groups") or []:
        key = (g.get("keys") or [None])[0]
        hit = next((k for k in left if (key == k if period else same(kind, key, k))), _MISSING)
        if hit is _MISSING:
            out.append(f"group {key!r} is no value the rows hold")
        elif not near(g.get("value"), left.pop(hit)):
            out.append(f"group {key!r} holds {g.get('value')!r}, the rows {want[hit]}")
    out.extend(f"group {k!r} ({v}) missing" for k, v in left.items())
    return out


def problems(
    kind: str, data: dict[str, Any], want: Counter[Any], same: Any, *, period: bool
) -> list[str]:
    """What the answer's groups state other than the oracle's counts."""
    found = data.get("groups") or []
    out: list[str] = []
    if data.get("total") != sum(want.values()):
        out.append(f"total {data.get('total')!r}, the rows hold {sum(want.values())}")
    if data.get("truncated") or data.get("other"):
        out.append("groups cut (the generated rows hold fewer than the default limit)")
    left = dict(want)
    for g in found:
        keys = g.get("keys") or [None]
        key = keys[0]
        hit = next(
            (k for k in left if (key == k if period else same(kind, key, k))),
            _MISSING,
        )
        if hit is _MISSING:
            out.append(f"group {key!r} is no value the rows hold")
        elif g.get("value") != left.pop(hit):
            out.append(f"group {key!r} counts {g.get('value')}, the rows {want[hit]}")
    out.extend(f"group {k!r} ({n}) missing" for k, n in left.items())
    return out


_MISSING = object()
