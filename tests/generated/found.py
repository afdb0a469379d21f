"""Generated examples kept as a case file: a deployment, its questions, the oracle's answers.

When the property fails, its report holds the failing deployment and
questions in this format, ready to be added to tests/generated/found.toml
(`dump`); tests/generated/test_generated_found.py loads every example
(`load`), checks the stored answers are still the oracle's, and asks the
questions on a database built from the example on its dialect.

An example is a `[[example]]` table: `title`, `dialect` (where it was found),
`now`, `gaps` (for a shape not served yet: its KNOWN_GAPS keys), then its
`entity` tables (a noun of the bank, the id and label column types, and
`fields`: [concept, SQL type or "fact", nullable]), its declared `relation`s
(child, parent, key column and its type, names and words), `row`s (`values`: id,
label, the column fields and a child's parent key; a missing key is NULL),
`fact`s and `question`s (the text, its structured conditions for the oracle, and
`expect`: the ids surely and possibly matching, for a status/compare the
object's values, for a breakdown its [key, count] groups).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from generated.model import (
    Deployment,
    Entity,
    Fact,
    Field,
    Passages,
    Relation,
    Row,
    Value,
    toml_value,
)
from generated.oracle import Expected, expected
from generated.periods import Range
from generated.questions import Cond, Question
from generated.vocab import CONCEPTS, NOUNS

FOUND_FILE = Path(__file__).with_name("found.toml")
_CONCEPTS = {c.key: c for c in CONCEPTS}
_NOUNS = {n.key: n for n in NOUNS}


@dataclass(frozen=True)
class Example:
    title: str
    deployment: Deployment
    questions: tuple[Question, ...]
    expects: tuple[dict[str, Any], ...]  # as stored in the file
    # the KNOWN_GAPS entries the example shows, until fixed ("sqlite:…" on SQLite only)
    gaps: tuple[str, ...] = ()

    def open_gaps(self, dialect: str, known: Iterable[str]) -> list[str]:
        """The example's gaps still known, on `dialect`."""
        here = [g for g in self.gaps if ":" not in g or g.startswith(f"{dialect}:")]
        return [g for g in here if g in set(known)]


# -- writing ---------------------------------------------------------------------------


def _plain(value: Value) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    return value


def _range(r: Range | None) -> list[str]:
    assert r is not None
    return [m.isoformat() if m is not None else "" for m in r]


def _cond(c: Cond) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": c.kind, "field": c.field, "text": c.text}
    if isinstance(c.value, tuple):
        out["value"] = [_plain(v) for v in c.value]
    elif c.value is not None:
        out["value"] = _plain(c.value)
    if c.op:
        out["op"] = c.op
    if c.definite is not None:
        out["definite"], out["possible"] = _range(c.definite), _range(c.possible)
    if c.before_noun:
        out["before_noun"] = True
    return out


def expect_of(want: Expected) -> dict[str, Any]:
    """The oracle's answer as the case file states it."""
    if want.qtype in ("status", "compare"):
        return {
            "subjects": [
                {
                    "id": s.id,
                    **{k: _plain(v) for k, v in s.values.items() if v is not None},
                    **{f"fact.{p}": sorted(vs) for p, vs in s.facts.items()},
                }
                if s is not None
                else {}
                for s in want.subjects
            ]
        }
    out: dict[str, Any] = {}
    if want.qtype == "breakdown":
        # [key, count] per group (the key a parent's id or value, "" for none)
        groups = sorted(("" if k is None else str(_plain(k)), n) for k, n in want.groups.items())
        return {"groups": [list(g) for g in groups]}
    if want.qtype == "count":
        out["count"] = len(want.definite)
    if want.qtype == "existence" and want.possible == want.definite:
        out["exists"] = bool(want.definite)
    out["ids"] = sorted(want.definite)
    if want.possible != want.definite:
        # rows on an uncertain edge of a period: counted either way
        out["or_also"] = sorted(want.possible - want.definite)
    return out


def _lines(key: str, table: dict[str, Any]) -> list[str]:
    return ["", f"[[{key}]]", *(f"{k} = {toml_value(v)}" for k, v in table.items())]


def dump(title: str, dep: Deployment, questions: list[Question]) -> str:
    """One `[[example]]` of the case file: the deployment and these questions."""
    out = _lines("example", {"title": title, "dialect": dep.dialect, "now": dep.now.isoformat()})
    for e in dep.entities:
        fields = [[f.name, f.sql or "fact", f.nullable] for f in e.fields]
        table = {"noun": e.name, "id_sql": e.id_sql, "label_sql": e.label_sql, "fields": fields}
        if e.passages is not None:
            p = e.passages
            table["passages"] = [p.column, p.section or "", p.declared]
        out += _lines("example.entity", table)
    for rel in dep.relations:
        out += _lines("example.relation", {k: _plain_rel(v) for k, v in vars(rel).items()})
    for (tenant, name), rows in dep.rows:
        for r in rows:
            values = {k: _plain(v) for k, v in r.items() if v is not None}
            out += _lines("example.row", {"tenant": tenant, "entity": name, "values": values})
    for f in dep.facts:
        out += _lines(
            "example.fact",
            {
                "tenant": f.tenant,
                "entity": f.entity,
                "id": f.entity_id,
                "predicate": f.predicate,
                "value": f.value_text,
            },
        )
    for q in questions:
        table: dict[str, Any] = {
            "tenant": q.tenant,
            "lang": q.lang,
            "qtype": q.qtype,
            "entity": q.entity,
            "text": q.text,
        }
        if q.ids:
            table["ids"] = list(q.ids)
        if q.conds:
            table["conds"] = [_cond(c) for c in q.conds]
        kept = ("ask:", "field:", *(("rel:", "group:") if _across(q) else ()))
        asked = sorted(t for t in q.tags if t.startswith(kept))
        if asked:
            table["tags"] = asked  # an attribute question: which field it asks
        table["expect"] = expect_of(expected(dep, q))
        out += _lines("example.question", table)
    return "\n".join(out) + "\n"


def _across(q: Question) -> bool:
    """A question across a relation: its tags say what the oracle groups by."""
    return any(t.startswith("rel:") for t in q.tags)


def _plain_rel(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# -- reading ---------------------------------------------------------------------------


def _value(kind: str, raw: Any) -> Value:
    if kind == "number":
        return Decimal(str(raw))
    if kind == "date":
        return date.fromisoformat(raw)
    if kind == "datetime":
        return datetime.fromisoformat(raw)
    return raw  # type: ignore[no-any-return]


def _entity(raw: dict[str, Any]) -> Entity:
    fields = tuple(
        Field(_CONCEPTS[name], None if sql == "fact" else sql, bool(nullable))
        for name, sql, nullable in raw["fields"]
    )
    quoted = None
    if "passages" in raw:
        column, section, declared = raw["passages"]
        quoted = Passages(column, section or None, bool(declared))
    return Entity(_NOUNS[raw["noun"]], raw["id_sql"], raw["label_sql"], fields, quoted)


def _row(ent: Entity, values: dict[str, Any], keys: Iterable[Relation]) -> Row:
    row: Row = {"id": str(values["id"]), "label": values["label"]}
    for rel in keys:
        raw_key = values.get(rel.key)
        row[rel.key] = None if raw_key is None else str(raw_key)
    for f in ent.fields:
        if f.sql is not None:
            raw = values.get(f.name)
            row[f.name] = None if raw is None else _value(f.kind, raw)
    for name in ent.passages.columns if ent.passages is not None else ():
        row[name] = values.get(name)
    return row


def _span(raw: list[str]) -> Range:
    lo, hi = (datetime.fromisoformat(m) if m else None for m in raw)
    return lo, hi


def _cond_of(ent: Entity, raw: dict[str, Any]) -> Cond:
    value = raw.get("value")
    number = raw["kind"] == "number"
    if isinstance(value, list):
        value = tuple(Decimal(v) if number else v for v in value)
    elif value is not None and number:
        value = Decimal(value)
    dated = "definite" in raw
    return Cond(
        raw["kind"],
        raw["field"],
        raw["text"],
        value,
        raw.get("op", ""),
        _span(raw["definite"]) if dated else None,
        _span(raw["possible"]) if dated else None,
        bool(raw.get("before_noun", False)),
    )


def _example(raw: dict[str, Any]) -> Example:
    ents = tuple(_entity(e) for e in raw["entity"])
    by_name = {e.name: e for e in ents}
    rels = tuple(
        Relation(**{k: tuple(v) if isinstance(v, list) else v for k, v in r.items()})
        for r in raw.get("relation", [])
    )
    grouped: dict[tuple[str, str], list[Row]] = {}
    for r in raw.get("row", []):
        keys = [k for k in rels if k.child == r["entity"]]
        grouped.setdefault((r["tenant"], r["entity"]), []).append(
            _row(by_name[r["entity"]], r["values"], keys)
        )
    for tenant in ("tenant-a", "tenant-b"):
        for e in ents:
            grouped.setdefault((tenant, e.name), [])
    facts = []
    for f in raw.get("fact", []):
        concept = _CONCEPTS[f["predicate"]]
        canon = next(v.canon for v in concept.values if f["value"] in v.spellings)
        facts.append(Fact(f["tenant"], f["entity"], f["id"], f["predicate"], f["value"], canon))
    dep = Deployment(
        raw["dialect"],
        datetime.fromisoformat(raw["now"]),
        ents,
        tuple((k, tuple(v)) for k, v in grouped.items()),
        tuple(facts),
        rels,
    )
    questions = tuple(
        Question(
            q["text"],
            q["lang"],
            q["qtype"],
            q["entity"],
            q["tenant"],
            tuple(_cond_of(by_name[q["entity"]], c) for c in q.get("conds", [])),
            tuple(q.get("ids", [])),
            frozenset(q.get("tags", [])),
        )
        for q in raw["question"]
    )
    expects = tuple(q["expect"] for q in raw["question"])
    return Example(raw["title"], dep, questions, expects, tuple(raw.get("gaps", ())))


def load(path: Path = FOUND_FILE) -> list[Example]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [_example(raw) for raw in data.get("example", [])]
