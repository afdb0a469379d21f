"""Questions about a generated deployment, from zh and en templates, as users write them.

A question is a query type (count, existence, list, the status of one
object or one of its attributes (the object named by id or by its label),
the comparison of two, the explanation of a
name a documented entity's rows carry, the object topping a number or date
field) × the entity × 0–3
conditions joined as users join them (且, 并且, 、, 的; "and"), each drawn from
one field: an enum value or alias (stated, negated, or one of two), a yes/no
field (stated or negated), a number with its unit and a comparison or a range,
a date or time in a calendar or relative period, or not in it
(tests/generated/periods.py),
an absent value, a fact value (stated, negated, or one of two), a name only
the data knows (stated or negated), the object's name or a part of it; and the
sum, average, maximum or minimum of a number field over what 0–2 conditions
select, asked as a value ("员工的平均薪资是多少", "What is the highest salary of …").
Conditions are data (`Cond`), not code:
the oracle (tests/generated/oracle.py) interprets them over the rows, so a
failing example prints what was asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from generated.model import TENANTS, Deployment, Entity, Field, Value
from generated.periods import Range, moment_of, periods_of
from generated.vocab import Concept
from hypothesis import strategies as st


@dataclass(frozen=True)
class Cond:
    # value / not_value / any_value / bool / not_bool / number / absent / date /
    # not_date / fact / not_fact / any_fact / name / not_name / label
    kind: str
    field: str
    text: str
    value: Any = None
    op: str = ""  # number: gt gte lt lte between; date: the period's form
    definite: Range | None = None
    possible: Range | None = None
    # en: an adjective before the noun ("remote employees"), else a tail after it
    before_noun: bool = False

    def __repr__(self) -> str:
        extra = f" {self.op}" if self.op else ""
        value = f" {self.value!r}" if self.value is not None else ""
        return f"<{self.kind}{extra} {self.field}{value}: {self.text!r}>"


@dataclass(frozen=True)
class Question:
    text: str
    lang: str
    qtype: str  # count / existence / list / status / compare / explain / top / breakdown
    entity: str
    tenant: str
    conds: tuple[Cond, ...] = ()
    ids: tuple[str, ...] = ()
    tags: frozenset[str] = field(default_factory=frozenset)

    def __repr__(self) -> str:
        what = list(self.conds) if self.conds else list(self.ids)
        return f"Q[{self.tenant}] {self.text!r} ({self.qtype} {self.entity} {what})"


@dataclass(frozen=True)
class At:
    """Where a question is drawn: the deployment, the asked entity and tenant, the language."""

    dep: Deployment
    ent: Entity
    tenant: str
    lang: str
    gaps: frozenset[str]

    @property
    def zh(self) -> bool:
        return self.lang == "zh"

    def seen(self, f: Field) -> list[Value]:
        """The tenant's values of the field, so conditions hit its own data."""
        return [r.get(f.name) for r in self.dep.rows_of(self.tenant, self.ent.name)]


def _pick(draw: st.DrawFn, options: list[str] | tuple[str, ...]) -> str:
    return draw(st.sampled_from(sorted(options)))


def _word(draw: st.DrawFn, words: tuple[str, ...], lang: str) -> str:
    """A spelling for the language; an ASCII one serves zh too (A股, Go, K8s); now and
    then in another case or in full-width letters, as typed on a phone."""
    fit = [w for w in words if w.isascii() != (lang == "zh")]
    return _variant(draw, _pick(draw, fit or list(words)))


_FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}


def _variant(draw: st.DrawFn, text: str) -> str:
    how = draw(st.integers(0, 19))
    if how == 1:
        return text.upper()
    if how == 2:
        return text.title()
    if how == 3 and lang_free(text):
        return text.translate(_FULL_WIDTH)
    return text


def lang_free(text: str) -> bool:
    """ASCII letters and digits only: a word whose full-width form is still that word."""
    return text.isascii() and text.replace(" ", "").replace("-", "").isalnum()


def _syn(draw: st.DrawFn, c: Concept, lang: str) -> str:
    return _word(draw, (*c.zh, *c.en), lang)


def _nouns(c: Concept, lang: str) -> tuple[str, ...]:
    """The field's names that read as a noun ("hire date", not "hired")."""
    return c.zh if lang == "zh" else tuple(w for w in c.en if not w.endswith("ed"))


# -- conditions, one field each ---------------------------------------------------------


def _either(draw: st.DrawFn, at: At, f: Field) -> Cond:
    """One of two values: "高级或中级", "whose level is senior or mid-level"."""
    c = f.concept
    a, b = draw(st.lists(st.sampled_from(c.values), min_size=2, max_size=2, unique=True))
    wa, wb = _word(draw, a.spellings, at.lang), _word(draw, b.spellings, at.lang)
    syn = _syn(draw, c, at.lang)
    kind = "any_fact" if f.kind == "fact" else "any_value"
    if at.zh:
        text = _pick(draw, [f"{wa}或{wb}", f"{syn}为{wa}或{wb}", f"{syn}是{wa}或者{wb}"])
    else:
        text = f"whose {syn} is {wa} or {wb}"
    return Cond(kind, f.name, text, (a.canon, b.canon))


def _value(draw: st.DrawFn, at: At, f: Field) -> Cond:
    c = f.concept
    if len(c.values) > 1 and draw(st.integers(0, 4)) == 0:
        return _either(draw, at, f)
    value = draw(st.sampled_from(c.values))
    word = _word(draw, value.spellings, at.lang)
    syn = _syn(draw, c, at.lang)
    negated = draw(st.booleans())
    fact = f.kind == "fact"
    kind = ("not_" if negated else "") + ("fact" if fact else "value")
    if at.zh:
        forms = (
            [f"{syn}不是{word}", f"不是{word}", f"非{word}"]
            if negated
            else [word, f"{syn}为{word}", f"{syn}是{word}"]
        )
        return Cond(kind, f.name, _pick(draw, forms), value.canon)
    if negated:
        forms = [f"whose {syn} is not {word}", f"whose {syn} isn't {word}"]
        if not fact:
            forms += [f"that are not {word}", f"that aren't {word}"]
        return Cond(kind, f.name, _pick(draw, forms), value.canon)
    form = draw(st.sampled_from(["before", "whose"] + ([] if fact else ["that"])))
    if form == "before":
        return Cond(kind, f.name, word, value.canon, before_noun=True)
    text = f"whose {syn} is {word}" if form == "whose" else f"that are {word}"
    return Cond(kind, f.name, text, value.canon)


def _yes_no(draw: st.DrawFn, at: At, f: Field) -> Cond:
    word = _syn(draw, f.concept, at.lang)
    negated = draw(st.booleans())
    kind = "not_bool" if negated else "bool"
    if at.zh:
        forms = [f"非{word}", f"不是{word}"] if negated else [word]
        return Cond(kind, f.name, _pick(draw, forms), not negated)
    before = draw(st.booleans())
    if negated:
        text = (
            f"non-{word}"
            if before
            else _pick(draw, [f"that are not {word}", f"that aren't {word}"])
        )
    else:
        text = word if before else f"that are {word}"
    return Cond(kind, f.name, text, not negated, before_noun=before)


NUMBER_OPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gt": (("超过", "大于", "高于"), ("over", "more than", "above")),
    "lt": (("低于", "小于", "不到"), ("under", "below", "less than")),
    "gte": (("至少", "不少于", "最少"), ("at least",)),
    "lte": (("不超过", "最多"), ("at most", "no more than")),
}


def _plain(n: Decimal) -> str:
    text = f"{n:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def number_text(draw: st.DrawFn, n: Decimal, c: Concept, lang: str) -> str:
    """`n` as users write it: with 万 / k / thousands separators / a currency for money."""
    plain = _plain(n)
    forms = [plain]
    if c.style == "money" and n == n.to_integral():
        whole = int(n)
        if lang == "zh":
            forms.append(f"{plain}元")
            if whole % 10_000 == 0:
                forms.append(f"{whole // 10_000}万")
            elif whole % 1000 == 0 and whole > 10_000:
                forms.append(f"{_plain(Decimal(whole) / 10_000)}万")
        else:
            forms.extend([f"{whole:,}", f"${whole:,}"])
            if whole % 1000 == 0:
                forms.append(f"{whole // 1000}k")
    text = _pick(draw, forms)
    # full-width digits, as an IME types them ("２万")
    return text.translate(_FULL_WIDTH) if draw(st.integers(0, 19)) == 0 else text


def _between(draw: st.DrawFn, at: At, f: Field, syn: str, n: Decimal) -> Cond:
    """Both ends stated: inclusive, as SQL's BETWEEN."""
    c = f.concept
    hi = n + c.step * draw(st.integers(1, 8))
    a, b = number_text(draw, n, c, at.lang), number_text(draw, hi, c, at.lang)
    if at.zh:
        text = _pick(draw, [f"{syn}在{a}到{b}之间", f"{syn}介于{a}和{b}之间"])
    else:
        text = f"with a {syn} between {a} and {b}"
    return Cond("number", f.name, text, (n, hi), "between")


def _number(draw: st.DrawFn, at: At, f: Field) -> Cond:
    c = f.concept
    values = sorted({v for v in at.seen(f) if isinstance(v, Decimal)})
    if values and draw(st.booleans()):
        n = draw(st.sampled_from(values))  # a value the data holds: the edge of >, >=
    else:
        n = c.lo + c.step * draw(st.integers(0, int((c.hi - c.lo) / c.step)))
    syn = _syn(draw, c, at.lang)
    if draw(st.integers(0, 4)) == 0:
        return _between(draw, at, f, syn, n)
    op = _pick(draw, list(NUMBER_OPS))
    zh_words, en_words = NUMBER_OPS[op]
    num = number_text(draw, n, c, at.lang)
    if at.zh:
        text = f"{syn}{_pick(draw, zh_words)}{num}"
    else:
        how = _pick(draw, en_words)
        forms = [f"with a {syn} {how} {num}", f"whose {syn} is {how} {num}"]
        text = _pick(draw, forms)
    return Cond("number", f.name, text, n, op)


def _date(draw: st.DrawFn, at: At, f: Field) -> Cond:
    c = f.concept
    moments = [m for m in (moment_of(v) for v in at.seen(f)) if m is not None]
    periods = periods_of(at.dep.now, moments)
    if f.kind == "date" and "date_windows_on_dates" in at.gaps:
        periods = [p for p in periods if not p.form.startswith("window_")]
    period = draw(st.sampled_from(periods))
    negated = draw(st.integers(0, 5)) == 0
    verb = c.zh[0].removesuffix("日期").removesuffix("时间")  # 入职日期 lends 入职
    participle = next(w for w in c.en if w.endswith("ed"))
    if negated:
        text = f"不是{period.zh}{verb}" if at.zh else f"not {participle} {period.en}"
    elif at.zh:
        text = _pick(draw, [f"{c.zh[0]}在{period.zh}", f"{period.zh}{verb}"])
    else:
        text = f"{participle} {period.en}"
    kind = "not_date" if negated else "date"
    return Cond(kind, f.name, text, None, period.form, period.definite, period.possible)


def _absent(draw: st.DrawFn, at: At, f: Field) -> Cond | None:
    nouns = _nouns(f.concept, at.lang)
    if not nouns:
        return None
    syn = _pick(draw, nouns)
    text = f"没有{syn}" if at.zh else _pick(draw, [f"without a {syn}", f"with no {syn}"])
    return Cond("absent", f.name, text)


def _name(draw: st.DrawFn, at: At, f: Field) -> Cond | None:
    names = sorted({v for v in at.seen(f) if isinstance(v, str)})
    if not names:
        return None
    name = draw(st.sampled_from(names))
    syn = _syn(draw, f.concept, at.lang)
    negated = draw(st.booleans())
    if at.zh:
        text = f"{syn}{'不是' if negated else '为'}{name}"
    else:
        text = f"whose {syn} is {'not ' if negated else ''}{name}"
    return Cond("not_name" if negated else "name", f.name, text, name)


def _label(draw: st.DrawFn, at: At) -> Cond | None:
    """The object's name, or a part of it: "名为李娜", "名字里带交换", "called Harbor Point"."""
    labels = sorted({str(r["label"]) for r in at.dep.rows_of(at.tenant, at.ent.name)})
    if not labels:
        return None
    label = draw(st.sampled_from(labels))
    if not at.zh:
        return Cond("label", "name", f"{_pick(draw, ['called', 'named'])} {label}", label)
    if label.isascii() or len(label) < 3 or draw(st.booleans()):
        return Cond("label", "name", _pick(draw, [f"名为{label}", f"叫{label}"]), label)
    start = draw(st.integers(0, len(label) - 2))
    part = label[start : start + 2]
    return Cond("label", "name", _pick(draw, [f"名字里带{part}", f"名称包含{part}"]), part)


def condition(draw: st.DrawFn, at: At, f: Field) -> Cond | None:
    if f.kind in ("enum", "fact"):
        return _value(draw, at, f)
    if f.kind == "bool":
        return _yes_no(draw, at, f)
    if f.kind == "text":
        return _name(draw, at, f)
    if f.nullable and draw(st.integers(0, 3)) == 0:
        return _absent(draw, at, f)
    return _number(draw, at, f) if f.kind == "number" else _date(draw, at, f)


# -- whole questions ---------------------------------------------------------------------

ROW_TEMPLATES = {
    ("zh", "count"): ("有多少个{p}", "{p}有多少个", "{p}有几个"),
    ("zh", "existence"): ("有没有{p}", "是否有{p}"),
    ("zh", "list"): ("列出{p}", "{p}有哪些"),
    ("en", "count"): ("How many {p} are there?", "How many {p}?"),
    ("en", "existence"): ("Are there any {p}?",),
    ("en", "list"): ("List the {p}", "Show me the {p}"),
}
# How zh joins two conditions: 且, 并且, an enumeration comma, or each its own 的
ZH_JOINS = ("且", "并且", "、", "的")


def _phrase(ent: Entity, conds: list[Cond], lang: str, join: str) -> str:
    if lang == "zh":
        mods = join.join(c.text for c in conds)
        return f"{mods}的{ent.noun.zh}" if mods else ent.noun.zh
    before = [c.text for c in conds if c.before_noun]
    after = [c.text for c in conds if not c.before_noun]
    head = " ".join([*before, ent.noun.en_plural])
    return head + (" " + " and ".join(after) if after else "")


@st.composite
def row_question(draw: st.DrawFn, at: At, qtype: str) -> Question:
    conds: list[Cond] = []
    usable = [f for f in at.ent.fields if not (f.kind == "bool" and "bool_conditions" in at.gaps)]
    named = False
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 2, 3]))):
        if not named and draw(st.integers(0, 9)) == 0:
            named = True
            cond = _label(draw, at)
        elif usable:
            f = draw(st.sampled_from(usable))
            usable.remove(f)
            cond = condition(draw, at, f)
        else:
            break
        if cond is not None:
            conds.append(cond)
    if not at.zh and sum(c.before_noun for c in conds) > 1:
        # two adjectives before the noun read as one name ("senior remote"): keep one
        first = next(i for i, c in enumerate(conds) if c.before_noun)
        conds = [c for i, c in enumerate(conds) if not c.before_noun or i == first]
    template = _pick(draw, ROW_TEMPLATES[at.lang, qtype])
    join = _pick(draw, ZH_JOINS) if at.zh and len(conds) > 1 else ""
    text = template.format(p=_phrase(at.ent, conds, at.lang, join))
    tags = {f"cond:{c.kind}" for c in conds}
    tags |= {f"date:{c.op}" for c in conds if c.kind in ("date", "not_date")}
    return Question(text, at.lang, qtype, at.ent.name, at.tenant, tuple(conds), (), frozenset(tags))


OBJECT_TEMPLATES = {
    ("zh", "status"): ("{n} {a} 现在什么状态", "{n}{a}的状态如何"),
    ("en", "status"): ("What is the status of {n} {a}?", "What's the state of {n} {a}?"),
    ("zh", "compare"): ("{n} {a} 和 {b} 有什么区别", "比较{n} {a} 和 {b}", "{n}{a}和{b}的区别"),
    ("en", "compare"): (
        "Compare {ns} {a} and {b}",
        "What is the difference between {n} {a} and {b}?",
    ),
}
# one attribute of the object: "员工 E-4 的薪资是多少", "What is the salary of employee E-4?"
ATTRIBUTE_TEMPLATES = {
    "zh": ("{n} {a} 的{f}是多少", "{n}{a}的{f}是什么"),
    "en": ("What is the {f} of {n} {a}?",),
}


@st.composite
def object_question(draw: st.DrawFn, at: At, qtype: str) -> Question | None:
    here = [str(r["id"]) for r in at.dep.rows_of(at.tenant, at.ent.name)]
    # ids of either tenant, and one no tenant holds
    every = {str(r["id"]) for t in TENANTS for r in at.dep.rows_of(t, at.ent.name)}
    every.add(at.ent.id_of(len(every) + 1))
    if qtype == "status":
        # now and then an id the tenant does not hold (the other tenant may): never a row
        pool = (
            here if here and draw(st.integers(0, 4)) else sorted(every, key=lambda i: (len(i), i))
        )
        ids: tuple[str, ...] = (draw(st.sampled_from(pool)),)
    elif len(here) < 2:
        return None
    else:
        ids = tuple(draw(st.lists(st.sampled_from(here), min_size=2, max_size=2, unique=True)))
    template = _pick(draw, OBJECT_TEMPLATES[at.lang, qtype])
    tags: set[str] = set()
    if qtype == "status" and at.ent.fields and draw(st.booleans()):
        asked = draw(st.sampled_from(at.ent.fields))
        words = _nouns(asked.concept, at.lang)
        if words:
            template = _pick(draw, ATTRIBUTE_TEMPLATES[at.lang]).replace("{f}", _pick(draw, words))
            tags |= {"ask:attribute", f"field:{asked.name}"}
    noun = at.ent.noun.zh if at.zh else at.ent.noun.en
    text = template.format(n=noun, ns=at.ent.noun.en_plural, a=ids[0], b=ids[-1])
    return Question(text, at.lang, qtype, at.ent.name, at.tenant, (), ids, frozenset(tags))


# one attribute of an object named by its label: "李娜的薪资是多少", "What is Harbor
# Point's rent?"; the tenant may hold no object of that name, or several
LABEL_TEMPLATES = {
    "zh": ("{l}的{f}是多少", "{l} 的{f}是什么"),
    "en": ("What is {l}'s {f}?", "What is the {f} of {l}?"),
}


@st.composite
def label_question(draw: st.DrawFn, at: At) -> Question | None:
    here = at.dep.rows_of(at.tenant, at.ent.name)
    others = [r for t in TENANTS if t != at.tenant for r in at.dep.rows_of(t, at.ent.name)]
    # now and then a name only the other tenant's objects bear: never a row
    pool = here if here and draw(st.integers(0, 4)) else (others or here)
    asked_fields = [f for f in at.ent.fields if _nouns(f.concept, at.lang)]
    if not pool or not asked_fields:
        return None
    templates = LABEL_TEMPLATES[at.lang]
    label = str(draw(st.sampled_from(pool))["label"])
    ids = tuple(str(r["id"]) for r in here if str(r["label"]) == label)
    asked = draw(st.sampled_from(asked_fields))
    noun = _pick(draw, _nouns(asked.concept, at.lang))
    text = _pick(draw, templates).format(l=label, f=noun)
    tags = frozenset({"ask:attribute", f"field:{asked.name}", "by:label"})
    return Question(text, at.lang, "status", at.ent.name, at.tenant, (), ids, tags)


# the object holding the top (or bottom) value of a number or date field
TOP_TEMPLATES = {
    ("zh", "desc", False): ("{f}最高的{n}是哪个", "{f}最高的{n}是谁"),
    ("zh", "asc", False): ("{f}最低的{n}是哪个", "{f}最低的{n}是谁"),
    ("zh", "desc", True): ("{f}最晚的{n}是哪个",),
    ("zh", "asc", True): ("{f}最早的{n}是哪个", "{f}最早的{n}是谁"),
    ("en", "desc", False): ("Which {n} has the highest {f}?",),
    ("en", "asc", False): ("Which {n} has the lowest {f}?",),
    ("en", "desc", True): ("Which {n} has the latest {f}?",),
    ("en", "asc", True): ("Which {n} has the earliest {f}?",),
}


@st.composite
def top_question(draw: st.DrawFn, at: At) -> Question | None:
    """Which object tops a number or date field (the field's noun, zh or en)."""
    ranked = [
        f
        for f in at.ent.fields
        if f.kind in ("number", "date", "datetime") and _nouns(f.concept, at.lang)
    ]
    if not ranked:
        return None
    f = draw(st.sampled_from(ranked))
    direction = draw(st.sampled_from(["desc", "asc"]))
    timed = f.kind != "number"
    template = _pick(draw, TOP_TEMPLATES[at.lang, direction, timed])
    noun = at.ent.noun.zh if at.zh else at.ent.noun.en
    text = template.format(f=_pick(draw, _nouns(f.concept, at.lang)), n=noun)
    return Question(
        text,
        at.lang,
        "top",
        at.ent.name,
        at.tenant,
        (),
        (),
        frozenset({f"field:{f.name}", f"order:{direction}"}),
    )


# an explanation of what a name stands for; the label alone says which rows
EXPLAIN_TEMPLATES = {
    "zh": ("{l}是什么", "解释一下{l}"),
    "en": ("Explain {l}", "What is {l}?"),
}


@st.composite
def explain_question(draw: st.DrawFn, at: At) -> Question:
    """Of a documented entity: a label its tenant's rows carry, now and then one only
    the other tenant's rows (or none) carry."""
    here = sorted({str(r["label"]) for r in at.dep.rows_of(at.tenant, at.ent.name)})
    pool = here if here and draw(st.integers(0, 4)) else sorted(at.ent.noun.labels)
    label = draw(st.sampled_from(pool))
    text = _pick(draw, EXPLAIN_TEMPLATES[at.lang]).format(l=label)
    cond = Cond("label", "name", label, label)
    return Question(text, at.lang, "explain", at.ent.name, at.tenant, (cond,))


# a measure of a number field over the objects the conditions select, asked as a value
MEASURE_TEMPLATES = {
    ("zh", "sum"): ("{p}的{f}合计是多少", "{p}的总{f}是多少", "{p}的{f}总和是多少"),
    ("zh", "avg"): ("{p}的平均{f}是多少", "{p}的{f}平均是多少"),
    ("zh", "max"): ("{p}的最高{f}是多少", "{p}的最大{f}是多少"),
    ("zh", "min"): ("{p}的最低{f}是多少", "{p}的最小{f}是多少"),
    ("en", "sum"): ("What is the total {f} of {p}?", "What is the sum of {f} of {p}?"),
    ("en", "avg"): ("What is the average {f} of {p}?", "What is the mean {f} of {p}?"),
    ("en", "max"): ("What is the highest {f} of {p}?", "What is the maximum {f} of {p}?"),
    ("en", "min"): ("What is the lowest {f} of {p}?", "What is the minimum {f} of {p}?"),
}


@st.composite
def measure_question(draw: st.DrawFn, at: At) -> Question | None:
    """A sum, average, maximum or minimum of a number field (its noun, zh or en)
    over the objects 0–2 conditions of the other fields select."""
    numbers = [f for f in at.ent.fields if f.kind == "number" and _nouns(f.concept, at.lang)]
    if not numbers:
        return None
    f = draw(st.sampled_from(numbers))
    function = draw(st.sampled_from(["sum", "avg", "max", "min"]))
    usable = [g for g in at.ent.fields if g is not f and g.kind not in ("bool", "text")]
    conds: list[Cond] = []
    for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):
        if not usable:
            break
        g = draw(st.sampled_from(usable))
        usable.remove(g)
        cond = condition(draw, at, g)
        if cond is not None:
            conds.append(cond)
    if not at.zh and sum(c.before_noun for c in conds) > 1:
        first = next(i for i, c in enumerate(conds) if c.before_noun)
        conds = [c for i, c in enumerate(conds) if not c.before_noun or i == first]
    join = _pick(draw, ZH_JOINS) if at.zh and len(conds) > 1 else ""
    template = _pick(draw, MEASURE_TEMPLATES[at.lang, function])
    phrase = _phrase(at.ent, conds, at.lang, join)
    text = template.format(f=_pick(draw, _nouns(f.concept, at.lang)), p=phrase)
    tags = {f"cond:{c.kind}" for c in conds} | {f"field:{f.name}", f"function:{function}"}
    return Question(
        text, at.lang, "measure", at.ent.name, at.tenant, tuple(conds), (), frozenset(tags)
    )


def _shows_gap(at: At) -> bool:
    """Whether a snapshot or comparison of the entity shows a value the product cannot
    show yet: a many-valued fact, or a PostgreSQL DATE column (tests' KNOWN_GAPS)."""
    fields = at.ent.fields
    if "many_valued_facts" in at.gaps and any(f.concept.many for f in fields):
        return True
    dates = at.dep.dialect == "postgresql" and any(f.sql == "DATE" for f in fields)
    return dates and "postgresql:date_in_snapshots" in at.gaps


QTYPES = (
    *("count", "existence", "list", "count", "existence", "list", "status", "compare"),
    "explain",
    "top",
    "measure",
    "breakdown",
)


# the query types a question across a relation is asked as, two times in three when
# the asked entity has a declared relation (tests/generated/relations.py)
RELATED_QTYPES = ("count", "existence", "list", "breakdown")


@st.composite
def _across(draw: st.DrawFn, at: At, qtype: str) -> Question | None:
    """Two times in three a question of these types asks across one of the entity's
    relations."""
    if qtype not in RELATED_QTYPES:
        return None
    if not any(at.ent.name in (r.child, r.parent) for r in at.dep.relations):
        return None
    if not draw(st.integers(0, 2)):
        return None
    from generated.relations import related_question  # it builds on this module

    return draw(related_question(at, qtype))


@st.composite
def questions(
    draw: st.DrawFn,
    dep: Deployment,
    gaps: frozenset[str] = frozenset(),
    qtypes: tuple[str, ...] = QTYPES,
) -> Question:
    at = At(
        dep,
        draw(st.sampled_from(dep.entities)),
        draw(st.sampled_from(TENANTS)),
        draw(st.sampled_from(["zh", "en"])),
        gaps,
    )
    qtype = draw(st.sampled_from(qtypes))
    related = draw(_across(at, qtype))
    if related is not None:
        return related
    if qtype == "explain":
        if at.ent.passages is not None:
            return draw(explain_question(at))
        qtype = "list"
    if qtype == "breakdown":
        from generated.breakdowns import breakdown_question  # it builds on this module

        grouped = draw(breakdown_question(at))
        if grouped is not None:
            return grouped
        qtype = "count"
    if qtype == "top":
        top = draw(top_question(at))
        if top is not None:
            return top
        qtype = "list"
    if qtype == "measure":
        measured = draw(measure_question(at))
        if measured is not None:
            return measured
        qtype = "count"
    if qtype in ("status", "compare"):
        q = None if _shows_gap(at) else draw(_one_object(at, qtype))
        if q is not None:
            return q
        qtype = "list"
    return draw(row_question(at, qtype))


@st.composite
def _one_object(draw: st.DrawFn, at: At, qtype: str) -> Question | None:
    """A status or compare question: a third of the status ones name the object by
    its label, the rest by id."""
    if qtype == "status" and draw(st.integers(0, 2)) == 0:
        named = draw(label_question(at))
        if named is not None:
            return named
    return draw(object_question(at, qtype))
