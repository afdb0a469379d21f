"""RIGHT, SAFE or WRONG: one answer against the oracle's.

* RIGHT: answered with the question's contract, and the answer equals the
  oracle's: the count, the yes/no and the ids it names, the set of listed ids,
  every value and fact of a snapshot, every difference of a comparison (and no
  other), every passage of an explanation quoted from the row's passage column
  under its section, the objects topping a field (every one that ties) shown with
  the value they top.
  Values are compared by meaning, not by spelling: 4.5 and Decimal("4.50") are
  one number, a date may come as a date or as its midnight, a yes/no as a bool
  or 0/1, a fact under any alias of its value.
* SAFE: an abstention (clarify, insufficient_evidence, not_covered, refused,
  gated): nothing wrong left.
* WRONG: answered, and the answer is not the oracle's.

An exception out of `plan_and_answer` is judged apart (`ERROR`): it is neither
an answer nor an abstention, and the property allows none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from generated import breakdowns, measures_judge, relations
from generated.model import Deployment, Entity
from generated.oracle import Expected, Snapshot
from generated.questions import Question

from qdsl.dsl.textnorm import normalize_text
from qdsl.pipeline import AnswerResult
from qdsl.superlatives import TIE_ROWS

Outcome = Literal["right", "safe", "wrong", "error"]
ABSTENTIONS = frozenset({"clarify", "insufficient_evidence", "not_covered", "refused", "gated"})
CONTRACT = {
    "count": "count_scalar",
    "existence": "yes_no_with_evidence",
    "list": "entity_list",
    "status": "entity_snapshot",
    "compare": "comparison_with_basis",
    "explain": "explanation_with_citations",
    "top": "entity_list",
    "measure": "aggregate_with_basis",
    "breakdown": "breakdown_table",
}
# docs/catalog.md, `passage`: a passage is quoted up to this many characters, then "…"
EXCERPT = 200
_YES = frozenset({"true", "yes", "是", "1"})
_NO = frozenset({"false", "no", "否", "0"})


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str = ""


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _as_time(found: Any) -> date | datetime | None:
    if isinstance(found, date):
        return found
    if isinstance(found, str):
        try:
            return datetime.fromisoformat(found.replace("Z", "+00:00"))
        except ValueError:
            try:
                return date.fromisoformat(found)
            except ValueError:
                return None
    return None


def _same_time(kind: str, found: Any, wanted: date | datetime) -> bool:
    got = _as_time(found)
    if got is None:
        return False
    if kind == "date":
        if isinstance(got, datetime):
            got = _aware(got).astimezone(UTC)
            return got.time() == datetime.min.time() and got.date() == wanted
        return got == wanted
    if not isinstance(got, datetime):
        return False
    assert isinstance(wanted, datetime)
    return _aware(got) == wanted


def _same_number(found: Any, wanted: Decimal) -> bool:
    if isinstance(found, bool) or not isinstance(found, int | float | Decimal | str):
        return False
    try:
        return Decimal(str(found)) == wanted
    except InvalidOperation:
        return False


def _same_bool(found: Any, wanted: bool) -> bool:
    if isinstance(found, bool):
        return found is wanted
    if isinstance(found, int):
        return found in (0, 1) and bool(found) is wanted
    if isinstance(found, str):
        word = found.strip().casefold()
        return word in (_YES if wanted else _NO)
    return False


def same_value(kind: str, found: Any, wanted: Any) -> bool:
    """Whether an answer's value means the oracle's value of a field of `kind`."""
    if wanted is None or found is None:
        return found is None and wanted is None
    if kind == "number":
        return _same_number(found, wanted)
    if kind == "bool":
        return _same_bool(found, wanted)
    if kind in ("date", "datetime"):
        return _same_time(kind, found, wanted)
    return isinstance(found, str) and found == wanted


def kind_of(ent: Entity, name: str) -> str:
    return "text" if name == "name" else ent.field(name).kind


def _canon(ent: Entity, predicate: str, found: Any) -> frozenset[str] | None:
    """The canonical values an answer's fact entry states (None: not a fact's value)."""
    concept = ent.field(predicate).concept
    spelled = {normalize_text(s): v.canon for v in concept.values for s in v.spellings}
    if isinstance(found, dict):
        found = found.get("values", found.get("value"))
    items = [found] if isinstance(found, str) else found
    if not isinstance(items, list | tuple):
        return None
    out = set()
    for item in items:
        canon = spelled.get(normalize_text(str(item)))
        if canon is None:
            return None
        out.add(canon)
    return frozenset(out)


def _snapshot_problems(ent: Entity, entity: Any, want: Snapshot, asked: set[str]) -> list[str]:
    """Every value shown is the object's; none is left out, or when one attribute was
    asked ("the salary of E-4"), not that one."""
    if not isinstance(entity, dict) or str(entity.get("id")) != want.id:
        return [f"shows {entity!r:.80}, not {ent.name} {want.id}"]
    out: list[str] = []
    for name, wanted in want.values.items():
        if name not in entity and wanted is not None and (not asked or name in asked):
            out.append(f"{name} missing (is {wanted!r})")
        elif name in entity and not same_value(kind_of(ent, name), entity[name], wanted):
            out.append(f"{name} = {entity[name]!r}, is {wanted!r}")
    facts = entity.get("facts") or {}
    shown = set(want.facts) if not asked else set(want.facts) & asked
    for predicate in sorted(shown | set(facts)):
        found = _canon(ent, predicate, facts.get(predicate)) if predicate in facts else frozenset()
        wanted_facts = want.facts.get(predicate, frozenset())
        if found != wanted_facts:
            out.append(f"fact {predicate} = {facts.get(predicate)!r}, is {sorted(wanted_facts)}")
    return out


def _differences(ent: Entity, a: Snapshot, b: Snapshot) -> dict[str, dict[str, Any]]:
    """field -> {id: value} for every field on which the two differ."""
    out: dict[str, dict[str, Any]] = {}
    for name in a.values:
        if a.values[name] != b.values[name]:
            out[name] = {a.id: a.values[name], b.id: b.values[name]}
    for predicate in set(a.facts) | set(b.facts):
        va, vb = a.facts.get(predicate, frozenset()), b.facts.get(predicate, frozenset())
        if va != vb:
            out[predicate] = {a.id: va, b.id: vb}
    return out


def _same_in_compare(ent: Entity, name: str, found: Any, wanted: Any) -> bool:
    if isinstance(wanted, frozenset):  # a fact's values
        return (_canon(ent, name, found) if found is not None else frozenset()) == wanted
    return same_value(kind_of(ent, name), found, wanted)


def _compare_problems(
    ent: Entity, data: dict[str, Any], want: tuple[Snapshot | None, ...]
) -> list[str]:
    a, b = want
    assert a is not None and b is not None
    subjects = {str(s.get("id")) for s in data.get("subjects") or []}
    if subjects != {a.id, b.id}:
        return [f"compares {sorted(subjects)}, not {[a.id, b.id]}"]
    wanted = _differences(ent, a, b)
    found = {str(d.get("field")): d.get("values") or {} for d in data.get("differences") or []}
    out = [
        f"{name} differs ({wanted[name]}) but is not reported"
        for name in wanted
        if name not in found
    ]
    for name, values in found.items():
        if name not in wanted:
            out.append(f"reports {name} as a difference ({values}), the two agree")
            continue
        for ident, value in wanted[name].items():
            if not _same_in_compare(ent, name, values.get(ident), value):
                out.append(f"{name} of {ident} = {values.get(ident)!r}, is {value!r}")
    return out


def _row_problems(q: Question, data: dict[str, Any], want: Expected) -> list[str]:
    lo, hi = len(want.definite), len(want.possible)
    if q.qtype == "count":
        n = data.get("count")
        return (
            [] if isinstance(n, int) and lo <= n <= hi else [f"count {n}, expected {_span(lo, hi)}"]
        )
    key = "matches" if q.qtype == "existence" else "items"
    named = {str(r.get("id")) for r in data.get(key) or []}
    out = (
        [f"names {sorted(named - want.possible)}, which fail the conditions"]
        if named - want.possible
        else []
    )
    if q.qtype == "existence":
        exists = data.get("exists")
        # yes when some row surely matches, no when none can; either between
        allowed = {True} if want.definite else {False} if not want.possible else {True, False}
        if not isinstance(exists, bool) or exists not in allowed or (exists and not named):
            out.append(f"exists {exists} naming {sorted(named)}, expected {_span(lo, hi)} matches")
        return out
    total = data.get("total")
    if not (isinstance(total, int) and lo <= total <= hi):
        out.append(f"total {total}, expected {_span(lo, hi)}")
    missing = want.definite - named
    if missing and not data.get("truncated"):
        out.append(f"leaves out {sorted(missing)}")
    return out


def excerpt(text: str) -> str:
    return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")


def _passage_problems(
    dep: Deployment, q: Question, data: dict[str, Any], want: Expected
) -> list[str]:
    """Each passage is a matching row of the tenant, quoted from the catalog's passage
    column under its section; none is left out."""
    ent = dep.entity(q.entity)
    quoted = ent.passages
    assert quoted is not None
    rows = {str(r["id"]): r for r in dep.rows_of(q.tenant, q.entity)}
    found = data.get("passages") or []
    named = {str(p.get("id")) for p in found}
    out = (
        [f"quotes {sorted(named - want.possible)}, which fail the conditions"]
        if (named - want.possible)
        else []
    )
    if not found:
        out.append("answered without a passage")
    if want.definite - named:
        out.append(f"leaves out {sorted(want.definite - named)}")
    for p in found:
        row = rows.get(str(p.get("id")))
        if row is None:
            continue
        if p.get("title") != row["label"]:
            out.append(f"{p.get('id')} titled {p.get('title')!r}, is {row['label']!r}")
        text = excerpt(str(row[quoted.column]))
        if p.get("text") != text:
            out.append(f"{p.get('id')} quotes {str(p.get('text'))[:40]!r}, not its {quoted.column}")
        section = row[quoted.section] if quoted.section is not None else None
        if p.get("section") != section:
            out.append(f"{p.get('id')} under {p.get('section')!r}, is {section!r}")
    return out


def _top_problems(dep: Deployment, q: Question, data: dict[str, Any], want: Expected) -> list[str]:
    """Every object holding the top value (never one picked among ties; at most
    TIE_ROWS of them when more tie), each shown with that value, out of every row
    of the tenant. When no row holds a value, one object, any."""
    ent = dep.entity(q.entity)
    name = next(t.removeprefix("field:") for t in q.tags if t.startswith("field:"))
    items = data.get("items") or []
    named = [str(i.get("id")) for i in items]
    if not want.possible:
        return [f"names {named}, the tenant holds none"] if named else []
    rows = {str(r["id"]): r for r in dep.rows_of(q.tenant, q.entity)}
    held = any(r[name] is not None for r in rows.values())
    count = min(len(want.definite), TIE_ROWS) if held else 1
    if len(named) != count or len(set(named)) != count:
        return [f"names {len(items)} objects, the top is {sorted(want.definite)}"]
    if not set(named) <= want.definite:
        return [f"names {sorted(named)}, the top is {sorted(want.definite)}"]
    out = []
    if data.get("total") != len(want.possible):
        out.append(f"total {data.get('total')}, expected {len(want.possible)}")
    for ident, item in zip(named, items, strict=True):
        wanted = rows[ident][name]
        if wanted is not None and not same_value(kind_of(ent, name), item.get(name), wanted):
            out.append(f"{ident} shows {name} = {item.get(name)!r}, is {wanted!r}")
    return out


def _breakdown_problems(
    dep: Deployment, q: Question, data: dict[str, Any], want: Expected
) -> list[str]:
    related = breakdowns.related_group(q)
    if related is not None:
        _, kind = relations.related_groups(dep, q, related)
        out = breakdowns.problems(kind, data, want.groups, same_value, period=False)
        if relations.SEPARATOR not in related:  # per parent: each shown by its label
            out += relations.labels_problems(dep, q, data, related)
        return out
    name = next(t.removeprefix("group:") for t in q.tags if t.startswith("group:"))
    kind = kind_of(dep.entity(q.entity), name)
    if "measured" in q.tags:
        rows = dep.rows_of(q.tenant, q.entity)
        return breakdowns.measured_problems(rows, q, data, kind, same_value)
    period = any(t.startswith("grain:") for t in q.tags)
    return breakdowns.problems(kind, data, want.groups, same_value, period=period)


def _span(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}..{hi}"


def judge(dep: Deployment, q: Question, res: AnswerResult, want: Expected) -> Verdict:
    status = str(res.status)
    if status in ABSTENTIONS:
        return Verdict("safe", f"{status}: {(res.text or '')[:160]}")
    if status != "answered":
        return Verdict("wrong", f"status {status}")
    contract = res.answer_contract.value if res.answer_contract else None
    if contract != CONTRACT[q.qtype]:
        return Verdict("wrong", f"answered as {contract}, asked {q.qtype}")
    data = res.data or {}
    ent = dep.entity(q.entity)
    if q.qtype == "status" and len(want.subjects) > 1:
        # several objects bear the asked name: any one shown is beside the question
        shown = (data.get("entity") or {}).get("id")
        problems = [f"shows {shown!r} of the {len(want.subjects)} objects named so"]
    elif q.qtype == "status":
        (one,) = want.subjects
        if one is None:
            problems = (
                []
                if data.get("entity") is None
                else [
                    f"shows {data.get('entity')!r:.80}, the tenant has no {(q.ids or (q.text,))[0]}"
                ]
            )
        else:
            asked = {t.removeprefix("field:") for t in q.tags if t.startswith("field:")}
            problems = _snapshot_problems(ent, data.get("entity"), one, asked)
    elif q.qtype == "compare":
        problems = _compare_problems(ent, data, want.subjects)
    elif q.qtype == "explain":
        problems = _passage_problems(dep, q, data, want)
    elif q.qtype == "top":
        problems = _top_problems(dep, q, data, want)
    elif q.qtype == "measure":
        problems = measures_judge.problems(dep, q, data, want)
    elif q.qtype == "breakdown":
        problems = _breakdown_problems(dep, q, data, want)
    else:
        problems = _row_problems(q, data, want)
    return Verdict("wrong", "; ".join(problems)) if problems else Verdict("right")
