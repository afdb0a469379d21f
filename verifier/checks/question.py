"""question_covered: the plan carries everything the *question* states, and the
result answers it.

The question is read against the catalog independently of whichever planner
wrote the plan (`qdsl.dsl.question.read_question`; the pipeline reads it once
and hands the same reading to the rule planner and to this check). Every
condition of the reading must be a filter of the plan (same field, same
polarity, same value, number or range; aliases count as their canonical
value), the asked entity must be the plan's, sort and limit must be kept, the
plan must state nothing the question does not, and words no field carries
fail with the sentence that names them. No plan can switch this check off.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime
from typing import Any

from qdsl.dsl.catalog import EntitySpec, FieldSpec, FieldType
from qdsl.dsl.ir import Filter, Operator, Plan, ValueSource
from qdsl.dsl.question import Condition, Problem, Reading, problem_sentence
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.result import ResultRow
from qdsl.verifier.checks.base import Subject, error, skipped
from qdsl.verifier.checks.measures import measure_issues
from qdsl.verifier.checks.ranges import POINT_OPERATORS, RANGE_OPERATORS, interval
from qdsl.verifier.model import Issue, Outcome
from qdsl.verifier.ties import ties_read

NAME = "question_covered"
_CLARIFY = Outcome.RETRY_WITH_CLARIFIED_PLAN
_POSITIVE = frozenset({Operator.EQUALS, Operator.EQUALS_OR_ALIAS, Operator.IN})
_NEGATIVE = frozenset({Operator.NOT_EQUALS, Operator.NOT_IN})


def _items(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


def _canon(spec: FieldSpec | None, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):  # 200000, 200000.0 and 2e5 are one number
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    text = normalize_text(str(value))
    if spec is not None:
        group = spec.alias_group(text)
        if group is not None:
            return normalize_text(group[0])
    return text


def _moment(value: object) -> datetime | None:
    try:
        if isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime(value.year, value.month, value.day)
        else:
            moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _same_scalar(spec: FieldSpec | None, a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    ma, mb = _moment(a), _moment(b)
    if ma is not None and mb is not None and "-" in str(a) and "-" in str(b):
        return ma == mb
    return _canon(spec, a) == _canon(spec, b)


def carries(c: Condition, f: Filter, spec: FieldSpec | None) -> bool:
    """Whether plan filter `f` states condition `c` (not wider, not narrower)."""
    if f.field != c.field:
        return False
    if c.operator in _POSITIVE or c.operator in _NEGATIVE:
        same_side = _POSITIVE if c.operator in _POSITIVE else _NEGATIVE
        if f.operator not in same_side:
            return False
        want = {_canon(spec, v) for v in _items(c.value)}
        got = {_canon(spec, v) for v in _items(f.value)}
        return want == got
    if c.operator is Operator.CONTAINS:
        return f.operator is Operator.CONTAINS and _canon(None, f.value) == _canon(None, c.value)
    if f.operator is not c.operator:
        return False
    if c.operator is Operator.BETWEEN:
        pairs = zip(_items(c.value), _items(f.value), strict=False)
        return len(_items(f.value)) == 2 and all(_same_scalar(spec, a, b) for a, b in pairs)
    return _same_scalar(spec, c.value, f.value)


def _spec(ent: EntitySpec | None, name: str) -> FieldSpec | None:
    return ent.filter_spec(name) if ent is not None else None


def _residual_carried(p: Problem, plan: Plan) -> bool:
    """A word the catalog does not know, carried by a text filter of the plan."""
    if p.reason != "residual":
        return False
    term = normalize_text(p.text)
    return any(
        f.operator is Operator.CONTAINS and normalize_text(str(f.value)) == term
        for f in plan.filters
    )


def _zh(reading: Reading) -> bool:
    return reading.language == "zh"


def _missing(reading: Reading, c: Condition) -> str:
    if _zh(reading):
        return f"“{c.text}”未被计划应用：缺少条件 {c.field} {c.operator.value} {c.value!r}"
    wanted = f"{c.field} {c.operator.value} {c.value!r}"
    return f"“{c.text}” is not applied: the plan has no filter {wanted}"


def _unasked(reading: Reading, f: Filter) -> str:
    if _zh(reading):
        return f"计划中的条件 {f.field} {f.operator.value} {f.value!r} 不是问题提出的"
    stated = f"{f.field} {f.operator.value} {f.value!r}"
    return f"the plan filters on {stated}, which the question does not state"


def _range_issues(
    reading: Reading,
    plan: Plan,
    spec: FieldSpec | None,
    conds: list[Condition],
    used: set[int],
) -> Iterator[str]:
    """The question's range on one field against the range the plan's filters on it
    allow together (`ranges`: `between` and `>= … and <` are one range); filters
    whose values give no interval are matched one by one. Adds the filters it
    accounts for to `used`."""
    field = conds[0].field
    mine = [
        i
        for i, f in enumerate(plan.filters)
        if i not in used
        and f.field == field
        and (
            f.operator in RANGE_OPERATORS
            or (f.operator in POINT_OPERATORS and len(_items(f.value)) == 1)
        )
    ]
    want = interval(spec, [(c.operator, c.value) for c in conds])
    got = interval(spec, [(plan.filters[i].operator, plan.filters[i].value) for i in mine])
    if want is None or (mine and got is None):
        for c in conds:
            free = (i for i in mine if i not in used and carries(c, plan.filters[i], spec))
            hit = next(free, None)
            if hit is None:
                yield _missing(reading, c)
            else:
                used.add(hit)
        return
    if not mine:
        for c in conds:
            yield _missing(reading, c)
        return
    used.update(mine)
    if got != want:
        assert got is not None
        words = "、".join(dict.fromkeys(c.text for c in conds))
        yield (
            f"“{words}”未被计划按原意应用：问题要求 {field} 在 {want.text()}，计划是 {got.text()}"
            if _zh(reading)
            else f"“{words}” is not applied as asked: the question means {field} in "
            f"{want.text()}, the plan states {got.text()}"
        )


def _plan_issues(
    reading: Reading, plan: Plan, ent: EntitySpec | None, rows: Sequence[ResultRow]
) -> Iterator[str]:
    if reading.entity_named and plan.entity_type != reading.entity:
        yield (
            f"问题问的是 {reading.entity}，计划查询的是 {plan.entity_type}"
            if _zh(reading)
            else f"the question asks about {reading.entity}, the plan about {plan.entity_type}"
        )
        return
    used: set[int] = set()
    ranged: dict[str, list[Condition]] = {}
    for c in reading.conditions:
        if c.operator in RANGE_OPERATORS:
            ranged.setdefault(c.field, []).append(c)
            continue
        spec = _spec(ent, c.field)
        hit = next(
            (i for i, f in enumerate(plan.filters) if i not in used and carries(c, f, spec)), None
        )
        if hit is None:
            yield _missing(reading, c)
        else:
            used.add(hit)
    for field, conds in ranged.items():
        yield from _range_issues(reading, plan, _spec(ent, field), conds, used)
    problems_carried = {
        i
        for i, f in enumerate(plan.filters)
        for p in reading.problems
        if _residual_carried(p, plan) and f.operator is Operator.CONTAINS
    }
    for i, f in enumerate(plan.filters):
        if i in used or i in problems_carried or f.value_source is not ValueSource.USER_TEXT:
            continue
        yield _unasked(reading, f)
    yield from _grouping_issues(reading, plan)
    have = {(s.field, s.direction) for s in plan.sort}
    for field, direction in reading.sort:
        if (field, direction) not in have:
            yield (
                f"计划没有按 {field} {direction.value} 排序"
                if _zh(reading)
                else f"the plan does not sort by {field} {direction.value}"
            )
    # "who has the highest salary" may name every row that ties at the top: a limit
    # widened to ties only (each row holds the first's value of the one sort field)
    ties = reading.limit == 1 and ties_read(plan, rows)
    if reading.limit is not None and plan.limit != reading.limit and not ties:
        yield (
            f"问题要 {reading.limit} 个，计划的 limit 是 {plan.limit}"
            if _zh(reading)
            else f"the question asks for {reading.limit}, the plan's limit is {plan.limit}"
        )
    if (
        reading.pronoun
        and not plan.scope.referenced_objects
        and not any(f.value_source is ValueSource.REFERENCED_OBJECT for f in plan.filters)
        and not reading.ids
    ):
        yield (
            "问题指向上下文中的对象，计划没有限定它"
            if _zh(reading)
            else "the question points at an object of the conversation; the plan ignores it"
        )


def _groups_text(groups: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f if g is None else f"{f} {getattr(g, 'value', g)}" for f, g in groups)


def _grouping_issues(reading: Reading, plan: Plan) -> Iterator[str]:
    """A question asking per group is answered per those groups, and only such a one."""
    want = {(f, g) for f, g in reading.group_by}
    got = {(g.field, g.grain) for g in plan.group_by}
    if want == got:
        return
    zh = _zh(reading)
    if not got:
        yield (
            f"问题按 {_groups_text(reading.group_by)} 分组，计划没有分组"
            if zh
            else f"the question asks per {_groups_text(reading.group_by)}; the plan does not group"
        )
    elif not want:
        stated = _groups_text([(g.field, g.grain) for g in plan.group_by])
        yield (
            f"计划按 {stated} 分组，问题没有要求分组"
            if zh
            else f"the plan groups by {stated}; the question asks for no groups"
        )
    else:
        stated = _groups_text([(g.field, g.grain) for g in plan.group_by])
        asked = _groups_text(reading.group_by)
        yield (
            f"问题按 {asked} 分组，计划按 {stated} 分组"
            if zh
            else f"the question asks per {asked}; the plan groups by {stated}"
        )


def _holds(c: Condition, value: Any, spec: FieldSpec | None, wanted: frozenset[str]) -> bool | None:
    """Whether a row's value satisfies c; None when it cannot be told here.
    `wanted`: `_wanted(c, spec)`, the same for every row."""
    op = c.operator
    if op is Operator.IS_NULL:
        return (value is None) is bool(c.value)
    if value is None:
        return op in _NEGATIVE
    if spec is not None and spec.type is FieldType.BOOL:
        value = _flag(value)
        if value is None:
            return None  # a value no yes/no reading of it can tell
    if op in _POSITIVE:
        return _canon(spec, value) in wanted
    if op in _NEGATIVE:
        return _canon(spec, value) not in wanted
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not all(isinstance(v, int | float) for v in _items(c.value)):
        return None
    bounds = [float(v) for v in _items(c.value)]  # type: ignore[arg-type]
    checks = {
        Operator.GT: lambda x: x > bounds[0],
        Operator.GTE: lambda x: x >= bounds[0],
        Operator.LT: lambda x: x < bounds[0],
        Operator.LTE: lambda x: x <= bounds[0],
        Operator.EQUALS: lambda x: x == bounds[0],
        Operator.BETWEEN: lambda x: bounds[0] <= x <= bounds[-1],
    }
    test = checks.get(op)
    return None if test is None else bool(test(float(value)))


_FLAG_WORDS = {"true": True, "t": True, "1": True, "false": False, "f": False, "0": False}


def _flag(value: Any) -> bool | None:
    """A yes/no value as a driver may return it (True, 1, "t", "true")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return _FLAG_WORDS.get(str(value).strip().lower()) if isinstance(value, str) else None


def _wanted(c: Condition, spec: FieldSpec | None) -> frozenset[str]:
    """The canonical values an equality condition accepts."""
    return frozenset(_canon(spec, v) for v in _items(c.value))


def _result_issues(
    reading: Reading, rows: Sequence[ResultRow], ent: EntitySpec | None
) -> Iterator[str]:
    for c in reading.conditions:
        spec = _spec(ent, c.field)
        if c.textual or spec is None or spec.is_fact:
            continue
        equality = c.operator in _POSITIVE or c.operator in _NEGATIVE
        wanted = _wanted(c, spec) if equality and rows else frozenset()
        for row in rows:
            if c.field not in row.values:
                continue
            if _holds(c, row.values[c.field], spec, wanted) is False:
                yield (
                    f"结果中的 {row.entity_id} 不满足“{c.text}”"
                    if _zh(reading)
                    else f"result row {row.entity_id} does not satisfy “{c.text}”"
                )
                break


def _row_text(row: ResultRow) -> str:
    facts = [v for values in row.facts.values() for v in values]
    parts = [row.label or "", *map(str, row.values.values()), *facts]
    return normalize_text(" ".join(parts))


def _unmentioned(reading: Reading, rows: Sequence[ResultRow]) -> Iterator[str]:
    """Explain answers: passages that never mention the asked terms answer nothing."""
    if not reading.text_terms or not rows:
        return
    texts = [_row_text(r) for r in rows]
    for term in reading.text_terms:
        norm = normalize_text(term)
        if rows and not any(norm in t for t in texts):
            yield (
                f"引用的段落都没有提到“{term}”"
                if _zh(reading)
                else f"no cited passage mentions “{term}”"
            )


def question_covered(s: Subject) -> Iterator[Issue]:
    reading = s.context.question
    if reading is None:
        # A caller's plan with no question: there is nothing to check it against,
        # which is not the same as having checked it.
        yield skipped(NAME, "no question was given: the plan was not checked against one")
        return
    ent = s.context.catalog.entities.get(s.plan.entity_type)
    for p in reading.problems:
        if not _residual_carried(p, s.plan):
            yield error(NAME, problem_sentence(p, reading.entity, reading.language), _CLARIFY)
    if reading.entity is None or reading.query_type is None:
        return
    for message in _plan_issues(reading, s.plan, ent, s.result.rows):
        yield error(NAME, message, _CLARIFY)
    for message in measure_issues(reading, s.plan, ent):
        yield error(NAME, message, _CLARIFY)
    for message in _result_issues(reading, s.result.rows, ent):
        yield error(NAME, message, Outcome.RETRY_WITH_SAME_PLAN)
    for message in _unmentioned(reading, s.result.rows):
        yield error(NAME, message, Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE)
