"""Questions generated from a catalog, with their answers computed from the rows.

A question is a cue (count, existence, list) × an entity synonym × 0–3
conditions × 0–2 words no catalog knows, in zh or en. Conditions are drawn
from the catalog: enum values and their aliases (stated, or negated), fact
values (stated, or negated), numbers on number fields (over, under, at least,
at most; written with units), calendar years on date fields, and absence of a
value. The phrasings are the ones users write; nothing here reads the planner.

Spellings the catalog itself gives two meanings within one entity (a word that
is both the entity's synonym and a value alias) are left out: no single answer
is right for them.

`Oracle` answers a generated question from the rows (SQLAlchemy Core reads of
the catalog's tables, filtered in plain Python; NULL fails every comparison; a
negated fact selects the rows lacking it, as SPEC's `not_equals` on a fact).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from hypothesis import strategies as st
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec, FieldType
from qdsl.dsl.textnorm import normalize_text

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMERIC = (FieldType.NUMBER,)
TIMES = (FieldType.DATE, FieldType.DATETIME)
CUES = ("count", "existence", "list")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Words no catalog here maps and no row contains (checked by the test).
UNKNOWN_ZH = ("欧洲", "绿色", "区块链", "南极", "量子", "海鲜")
UNKNOWN_EN = ("European", "green", "blockchain", "Antarctic", "quantum", "seafood")


def is_zh(text: str) -> bool:
    return bool(CJK.search(text))


@dataclass(frozen=True)
class Cond:
    """One stated condition: its text and the row predicate it means."""

    text: str
    field: str
    test: Callable[[dict[str, Any]], bool]
    kind: str


@dataclass(frozen=True)
class Question:
    text: str
    lang: str
    cue: str
    entity: str
    conds: tuple[Cond, ...]
    unknown: tuple[str, ...]

    def describe(self) -> str:
        kinds = ", ".join(f"{c.kind}:{c.field}" for c in self.conds) or "no condition"
        return f"{self.text!r} [{self.cue} {self.entity}; {kinds}; unknown {list(self.unknown)}]"


@dataclass(frozen=True)
class At:
    """Where a condition is drawn: a field of an entity, in a language."""

    fname: str
    field: FieldSpec
    lang: str
    meanings: dict[str, set[str]]
    ent: EntityRows
    now: datetime
    others: dict[str, EntityRows]


@dataclass
class EntityRows:
    spec: EntitySpec
    rows: list[dict[str, Any]]
    # entity id -> predicate -> normalized fact values
    facts: dict[str, dict[str, set[str]]] = field(default_factory=dict)


def _time(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        moment = value
    else:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def load_rows(engine: Engine, catalog: Catalog, tenant: str) -> dict[str, EntityRows]:
    """The tenant's rows of every entity (the columns its fields name) and their facts."""
    facts_t = sa.table(
        catalog.facts.table,
        *(
            sa.column(c)
            for c in ("tenant_id", "entity_type", "entity_id", "predicate", "value_norm")
        ),
    )
    out: dict[str, EntityRows] = {}
    with engine.connect() as conn:
        for name, spec in catalog.entities.items():
            cols = {spec.id, spec.tenant, spec.label, *spec.text_search}
            cols |= {f.column for f in spec.fields.values() if f.column}
            table = sa.table(spec.table, *(sa.column(c) for c in sorted(cols)))
            query = sa.select(table).where(table.c[spec.tenant] == tenant)
            rows = [dict(r) for r in conn.execute(query).mappings()]
            for r in rows:
                r[spec.id] = str(r[spec.id])
                for f in spec.fields.values():
                    if f.column and f.type in TIMES:
                        r[f.column] = _time(r[f.column])
                    if f.column and f.type in NUMERIC and r[f.column] is not None:
                        r[f.column] = float(r[f.column])
            entity = EntityRows(spec, rows)
            fq = sa.select(facts_t).where(
                facts_t.c.tenant_id == tenant, facts_t.c.entity_type == name
            )
            for f in conn.execute(fq).mappings():
                per = entity.facts.setdefault(str(f["entity_id"]), {})
                per.setdefault(f["predicate"], set()).add(f["value_norm"])
            out[name] = entity
    return out


def _spellings(spec: EntitySpec) -> dict[str, set[str]]:
    """Every spelling the catalog gives within the entity -> the meanings it has."""
    meanings: dict[str, set[str]] = {}

    def note(word: str, meaning: str) -> None:
        meanings.setdefault(normalize_text(word), set()).add(meaning)

    for s in spec.synonyms:
        note(s, "entity")
    for fname, f in spec.fields.items():
        for s in f.synonyms:
            note(s, f"field:{fname}")
        for canon, spellings in f.aliases.items():
            for s in (canon, *spellings):
                note(s, f"value:{fname}:{canon}")
        for v in f.values:
            note(v, f"value:{fname}:{v}")
    return meanings


def _clear(word: str, meanings: dict[str, set[str]]) -> bool:
    # one meaning in the entity, and spelled as people write (not an identifier like a_b)
    return len(meanings.get(normalize_text(word), set())) == 1 and "_" not in word


def _pick(draw: st.DrawFn, options: list[str] | tuple[str, ...]) -> str:
    return draw(st.sampled_from(sorted(options)))


def _syn(draw: st.DrawFn, f: FieldSpec, lang: str, meanings: dict[str, set[str]]) -> str | None:
    words = [s for s in f.synonyms if is_zh(s) == (lang == "zh") and _clear(s, meanings)]
    return _pick(draw, words) if words else None


def _value_cond(draw: st.DrawFn, at: At) -> Cond | None:
    fname, f, lang, meanings, ent = at.fname, at.field, at.lang, at.meanings, at.ent
    canon = _pick(draw, list(f.aliases) or list(f.values))
    group = {normalize_text(s) for s in (canon, *f.aliases.get(canon, ()))}
    words = [s for s in (canon, *f.aliases.get(canon, ())) if _clear(s, meanings)]
    words = [w for w in words if (lang == "zh") == is_zh(w)] or [w for w in words if w.isascii()]
    if not words:
        return None
    word = _pick(draw, words)
    negated = draw(st.booleans())
    syn = _syn(draw, f, lang, meanings)
    if f.is_fact:
        pred = f.fact or fname

        def has(r: dict[str, Any]) -> bool:
            return bool(ent.facts.get(r[ent.spec.id], {}).get(pred, set()) & group)
    else:
        column = f.column or fname

        def has(r: dict[str, Any]) -> bool:
            v = r[column]
            return v is not None and normalize_text(str(v)) in group

    if lang == "zh":
        forms = [f"不是{word}", f"非{word}"] if negated else [word]
        if syn:
            forms.append(f"{syn}{'不是' if negated else '为'}{word}")
    else:
        forms = [f"that are not {word}"] if negated else [f"that are {word}"]
        if syn:
            forms.append(f"whose {syn} is {'not ' if negated else ''}{word}")
    text = _pick(draw, forms)
    if negated:
        if f.is_fact:
            return Cond(text, fname, lambda r: not has(r), "not_fact")
        column = f.column or fname
        return Cond(text, fname, lambda r: r[column] is not None and not has(r), "not_value")
    return Cond(text, fname, has, "fact" if f.is_fact else "value")


def _number_text(draw: st.DrawFn, n: int, lang: str) -> str:
    forms = [str(n)]
    if lang == "zh" and n % 10_000 == 0:
        forms.append(f"{n // 10_000}万")
    if lang == "en" and n % 1000 == 0:
        forms.extend([f"{n // 1000}k", f"{n:,}"])
    return _pick(draw, forms)


NUMBER_OPS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Callable[[float, float], bool]]] = {
    "gt": (("超过", "大于", "高于"), ("over", "more than", "above"), lambda v, n: v > n),
    "lt": (("低于", "小于", "不到"), ("under", "below", "less than"), lambda v, n: v < n),
    "gte": (("至少", "不少于"), ("at least",), lambda v, n: v >= n),
    "lte": (("不超过", "最多"), ("at most", "no more than"), lambda v, n: v <= n),
}


def _number_cond(draw: st.DrawFn, at: At) -> Cond | None:
    fname, f, lang, meanings, ent = at.fname, at.field, at.lang, at.meanings, at.ent
    syn = _syn(draw, f, lang, meanings)
    column = f.column
    values = sorted({r[column] for r in ent.rows if column and r[column] is not None})
    if syn is None or column is None or not values:
        return None
    base = draw(st.sampled_from(values))
    n = int(base) if draw(st.booleans()) else int(round(base * 1.5, -3) or base + 1)
    op = _pick(draw, list(NUMBER_OPS))
    zh_words, en_words, cmp = NUMBER_OPS[op]
    num = _number_text(draw, n, lang)
    if lang == "zh":
        text = f"{syn}{_pick(draw, zh_words)}{num}"
    else:
        text = f"with {'a ' if draw(st.booleans()) else ''}{syn} {_pick(draw, en_words)} {num}"
    return Cond(text, fname, lambda r: r[column] is not None and cmp(r[column], n), f"number_{op}")


def _date_cond(draw: st.DrawFn, at: At) -> Cond | None:
    fname, f, lang, meanings, ent = at.fname, at.field, at.lang, at.meanings, at.ent
    column = f.column
    if lang == "en":
        # a participle names the event ("created in 2026"); other synonyms do not read so
        words = [s for s in f.synonyms if s.isascii() and s.endswith("ed") and _clear(s, meanings)]
        syn = _pick(draw, words) if words else None
    else:
        syn = _syn(draw, f, lang, meanings)
    moments = [r[column] for r in ent.rows if column and r[column] is not None]
    if syn is None or column is None or not moments:
        return None
    now = at.now
    form = draw(st.sampled_from(["year", "this_year", "last_year", "month"]))
    if form == "month":
        pick = draw(st.sampled_from(sorted({(m.year, m.month) for m in moments})))
        zh, en = f"{pick[0]}年{pick[1]}月", f"{MONTHS[pick[1] - 1]} {pick[0]}"
        span = (pick, pick)
    else:
        year = {"this_year": now.year, "last_year": now.year - 1}.get(form)
        if year is None:
            year = draw(st.sampled_from(sorted({m.year for m in moments})))
        zh = {"this_year": "今年", "last_year": "去年"}.get(form, f"{year}年")
        en = {"this_year": "this year", "last_year": "last year"}.get(form, f"in {year}")
        span = ((year, 1), (year, 12))
    if form == "month":
        en = f"in {en}"
    text = f"{syn}在{zh}" if lang == "zh" else f"{syn} {en}"

    def within(r: dict[str, Any]) -> bool:
        m = r[column]
        return m is not None and span[0] <= (m.year, m.month) <= span[1]

    return Cond(text, fname, within, f"date_{form}")


def _absence_cond(draw: st.DrawFn, at: At) -> Cond | None:
    fname, f, lang, meanings = at.fname, at.field, at.lang, at.meanings
    # a noun names what is missing ("without a budget"); "without a hired" does not read
    nouns = [
        s
        for s in f.synonyms
        if is_zh(s) == (lang == "zh") and _clear(s, meanings) and not s.endswith(("ed", " at"))
    ]
    syn = _pick(draw, nouns) if nouns else None
    column = f.column
    if syn is None or column is None:
        return None
    text = f"没有{syn}" if lang == "zh" else _pick(draw, [f"without a {syn}", f"with no {syn}"])
    return Cond(text, fname, lambda r: r[column] is None, "absent")


def _name_cond(draw: st.DrawFn, at: At) -> Cond | None:
    """A name only the data knows: a linked text value, or the label of a referenced object."""
    fname, f, lang, meanings, ent = at.fname, at.field, at.lang, at.meanings, at.ent
    syn = _syn(draw, f, lang, meanings)
    column = f.column
    if syn is None or column is None:
        return None
    if f.references is not None:
        target = at.others[f.references]
        labels: dict[str, list[str]] = {}
        for r in target.rows:
            labels.setdefault(str(r[target.spec.label]), []).append(r[target.spec.id])
        names = {name: ids[0] for name, ids in labels.items() if len(ids) == 1}
    else:
        names = {str(r[column]): str(r[column]) for r in ent.rows if r[column] is not None}
    if not names:
        return None
    name = _pick(draw, list(names))
    wanted = names[name]
    negated = draw(st.booleans())
    if lang == "zh":
        text = f"{syn}{'不是' if negated else '为'}{name}"
    else:
        text = f"whose {syn} is {'not ' if negated else ''}{name}"

    def test(r: dict[str, Any]) -> bool:
        v = r[column]
        return v is not None and (str(v) != wanted if negated else str(v) == wanted)

    return Cond(text, fname, test, "not_name" if negated else "name")


def _conditions_of(spec: EntitySpec) -> list[tuple[str, FieldSpec, Callable[..., Cond | None]]]:
    out: list[tuple[str, FieldSpec, Callable[..., Cond | None]]] = []
    for fname, f in spec.fields.items():
        if f.sensitive:
            continue
        if f.type is FieldType.ENUM or (f.is_fact and f.aliases):
            out.append((fname, f, _value_cond))
        if f.column and f.type in NUMERIC:
            out.append((fname, f, _number_cond))
        if f.column and f.type in TIMES:
            out.append((fname, f, _date_cond))
        if f.column and f.type in (*NUMERIC, *TIMES, FieldType.ID) and f.synonyms:
            out.append((fname, f, _absence_cond))
        if f.column and (f.link_values or f.references):
            out.append((fname, f, _name_cond))
    return out


def _entity_word(
    draw: st.DrawFn, spec: EntitySpec, lang: str, meanings: dict[str, set[str]]
) -> str | None:
    words = [s for s in spec.synonyms if is_zh(s) == (lang == "zh") and _clear(s, meanings)]
    if lang == "en":
        words = [w for w in words if w.endswith("s")] or words
    return _pick(draw, words) if words else None


def _zh(cue: str, noun: str, conds: list[str], unknown: list[str]) -> str:
    mods = "且".join(conds)
    # a modifier that already ends in 的 (an alias such as 关闭的) takes no second one
    tie = "" if not mods or mods.endswith("的") else "的"
    phrase = mods + tie + "".join(unknown) + noun
    return {"count": f"有多少个{phrase}", "existence": f"有没有{phrase}", "list": f"列出{phrase}"}[
        cue
    ]


def _en(cue: str, noun: str, conds: list[str], unknown: list[str]) -> str:
    phrase = " ".join([*unknown, noun])
    tail = (" " + " and ".join(conds)) if conds else ""
    return {
        "count": f"How many {phrase}{tail} are there?",
        "existence": f"Are there any {phrase}{tail}?",
        "list": f"List the {phrase}{tail}",
    }[cue]


@st.composite
def questions(
    draw: st.DrawFn, catalog: Catalog, rows: dict[str, EntityRows], now: datetime
) -> Question:
    names = sorted(
        n
        for n, e in catalog.entities.items()
        if {"count", "existence", "list"} & {q.value for q in e.query_types} and e.synonyms
    )
    # entities with more fields to state are asked about more often
    weighted = [n for n in names for _ in range(1 + len(_conditions_of(catalog.entities[n])))]
    name = draw(st.sampled_from(weighted))
    spec, ent = catalog.entities[name], rows[name]
    meanings = _spellings(spec)
    lang = draw(st.sampled_from(["zh", "en"]))
    cue = draw(st.sampled_from([c for c in CUES if c in {q.value for q in spec.query_types}]))
    noun = _entity_word(draw, spec, lang, meanings)
    if noun is None:
        lang = "en" if lang == "zh" else "zh"
        noun = _entity_word(draw, spec, lang, meanings)
    assert noun is not None
    makers = _conditions_of(spec)
    conds: list[Cond] = []
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 3))):
        if not makers:
            break
        fname, f, make = draw(st.sampled_from(makers))
        if fname in used:
            continue
        cond = make(draw, At(fname, f, lang, meanings, ent, now, rows))
        if cond is not None:
            conds.append(cond)
            used.add(fname)
    pool = UNKNOWN_ZH if lang == "zh" else UNKNOWN_EN
    how_many = draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
    unknown = draw(
        st.lists(st.sampled_from(pool), min_size=how_many, max_size=how_many, unique=True)
    )
    texts = [c.text for c in conds]
    text = _zh(cue, noun, texts, unknown) if lang == "zh" else _en(cue, noun, texts, unknown)
    return Question(text, lang, cue, name, tuple(conds), tuple(unknown))


def expected_ids(question: Question, rows: dict[str, EntityRows]) -> set[str]:
    ent = rows[question.entity]
    return {r[ent.spec.id] for r in ent.rows if all(c.test(r) for c in question.conds)}
