"""The answer to a generated question, computed in plain Python from the generated rows.

Nothing here reads the database or calls qdsl's planner, reader or executor:
the rows and facts are the ones the strategy drew (tests/generated/model.py),
and each condition is interpreted as SPEC states it. SQL semantics for a
missing value: a comparison with NULL is false, so "salary over 20k" never
holds for a row without a salary, and neither does "not senior" for a row
without a level. A negated fact holds for an object lacking that value (SPEC's
`not_equals` on a fact). Conditions are three-valued: a row inside a period's
uncertain edge (see tests/generated/questions.py) is neither surely in nor
surely out, and the answer may count it either way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from generated import breakdowns, relations
from generated.model import Deployment, Row, Value
from generated.periods import Range, moment_of
from generated.questions import Cond, Question

from qdsl.dsl.textnorm import normalize_text


@dataclass(frozen=True)
class Snapshot:
    """One object as the answer must show it."""

    id: str
    values: dict[str, Value]  # "name" (the label) and every column field
    facts: dict[str, frozenset[str]] = field(default_factory=dict)  # predicate -> canonical values


@dataclass(frozen=True)
class Expected:
    qtype: str
    # count / existence / list: the ids surely matching, and those possibly matching;
    # top: the ids holding the top value, and every row (the total)
    definite: frozenset[str] = frozenset()
    possible: frozenset[str] = frozenset()
    # status: the object (None: the tenant has no such object); compare: both
    subjects: tuple[Snapshot | None, ...] = ()
    # breakdown: the tenant's rows counted per group key
    groups: Counter[Any] = field(default_factory=Counter)


def _in(moment: datetime, span: Range) -> bool:
    lo, hi = span
    return (lo is None or lo <= moment) and (hi is None or moment < hi)


def _compare(value: Decimal, op: str, n: Any) -> bool:
    if op == "between":
        lo, hi = n
        return bool(lo <= value <= hi)
    return bool({"gt": value > n, "gte": value >= n, "lt": value < n, "lte": value <= n}[op])


def holds(c: Cond, row: Row, facts: dict[str, frozenset[str]]) -> bool | None:
    """Whether the row meets the condition: True, False, or None (either reading)."""
    if c.kind in ("fact", "not_fact", "any_fact"):
        held = facts.get(c.field, frozenset())
        if c.kind == "any_fact":
            return bool(held & set(c.value))
        return (c.value in held) is (c.kind == "fact")
    if c.kind == "label":  # the name contains the words, as a text match does
        return normalize_text(c.value) in normalize_text(str(row["label"]))
    v = row[c.field]
    if c.kind == "absent":
        return v is None
    if v is None:
        return False
    if c.kind in ("value", "name", "bool"):
        return bool(v == c.value)
    if c.kind == "any_value":
        return v in c.value
    if c.kind in ("not_value", "not_name", "not_bool"):
        return bool(v != (c.value if c.kind != "not_bool" else True))
    if c.kind == "number":
        assert isinstance(v, Decimal)
        return _compare(v, c.op, c.value)
    assert c.kind in ("date", "not_date") and c.definite is not None and c.possible is not None
    moment = moment_of(v)
    assert moment is not None
    inside = True if _in(moment, c.definite) else None if _in(moment, c.possible) else False
    return inside if c.kind == "date" or inside is None else not inside


def all_hold(conds: Iterable[Cond], row: Row, facts: dict[str, frozenset[str]]) -> bool | None:
    """Kleene's AND: false if any is false, true if all are true, else unknown."""
    results = [holds(c, row, facts) for c in conds]
    if any(r is False for r in results):
        return False
    return True if all(r is True for r in results) else None


def facts_of(
    dep: Deployment, tenant: str, entity: str, entity_id: str
) -> dict[str, frozenset[str]]:
    return {p: frozenset(v) for p, v in dep.facts_of(tenant, entity, entity_id).items()}


def snapshot(dep: Deployment, tenant: str, entity: str, ident: str) -> Snapshot | None:
    ent = dep.entity(entity)
    quoted = ent.passages.columns if ent.passages is not None else ()
    # a relation's key column is no field of the catalog: no answer shows it
    quoted += tuple(r.key for r in dep.relations if r.child == entity)
    for row in dep.rows_of(tenant, entity):
        if row["id"] == ident:
            values = {
                "name": row["label"],
                **{k: v for k, v in row.items() if k not in ("id", "label", *quoted)},
            }
            return Snapshot(ident, values, facts_of(dep, tenant, entity, ident))
    return None


def _top(dep: Deployment, q: Question) -> Expected:
    """The rows holding the field's top (or bottom) value: the answer names each.
    When no row holds a value, any row is one (none tops another)."""
    name = next(t.removeprefix("field:") for t in q.tags if t.startswith("field:"))
    rows = dep.rows_of(q.tenant, q.entity)
    held = [(moment_of(r[name]) if not isinstance(r[name], Decimal) else r[name], r) for r in rows]
    valued = [(v, r) for v, r in held if v is not None]
    if not valued:
        every = frozenset(str(r["id"]) for r in rows)
        return Expected(q.qtype, every, every)
    pick = max if "order:desc" in q.tags else min
    best = pick(v for v, _ in valued)
    tops = frozenset(str(r["id"]) for v, r in valued if v == best)
    return Expected(q.qtype, tops, frozenset(str(r["id"]) for r in rows))


def _all_hold(dep: Deployment, q: Question, row: Row, bound: bool) -> bool | None:
    """The question's conditions on the row, those across a relation on its related rows."""
    facts = facts_of(dep, q.tenant, q.entity, str(row["id"]))
    own = [c for c in q.conds if relations.SEPARATOR not in c.field]
    results = [all_hold(own, row, facts)]
    results += [
        relations.related_holds(
            dep, q.tenant, q.entity, c, row, holds=holds, facts_of=facts_of, bound=bound
        )
        for c in q.conds
        if relations.SEPARATOR in c.field
    ]
    if any(r is False for r in results):
        return False
    return True if all(r is True for r in results) else None


def expected(dep: Deployment, q: Question, *, tenant_bound: bool = True) -> Expected:
    """The oracle's answer; `tenant_bound=False` reads related rows of either tenant (the
    careless join a right answer must never agree with where the two differ)."""
    if q.qtype == "breakdown":
        related = breakdowns.related_group(q)
        if related is not None:
            # only the children the question's own conditions keep (its values: no edge)
            def keep(row: Row) -> bool:
                return _all_hold(dep, q, row, True) is True

            groups, _ = relations.related_groups(dep, q, related, keep)
            return Expected(q.qtype, groups=groups)
        return Expected(q.qtype, groups=breakdowns.groups(dep.rows_of(q.tenant, q.entity), q))
    if q.qtype == "top":
        return _top(dep, q)
    if q.qtype == "status" and "by:label" in q.tags and not q.ids:
        return Expected(q.qtype, subjects=(None,))  # no object of the tenant bears the name
    if q.qtype in ("status", "compare"):
        return Expected(
            q.qtype, subjects=tuple(snapshot(dep, q.tenant, q.entity, i) for i in q.ids)
        )
    definite: set[str] = set()
    possible: set[str] = set()
    for row in dep.rows_of(q.tenant, q.entity):
        ident = str(row["id"])
        verdict = _all_hold(dep, q, row, tenant_bound)
        if verdict is not False:
            possible.add(ident)
        if verdict is True:
            definite.add(ident)
    return Expected(q.qtype, frozenset(definite), frozenset(possible))
