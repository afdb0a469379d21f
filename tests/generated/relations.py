"""Questions across a generated deployment's declared relation, and their oracle.

A relation ties a child entity's key column to a parent's id (tests/generated/
deployments.py). The questions, zh and en, in the phrasings the question reader
states (docs/plan-language.md, "Conditions across relations", "Grouping across a
relation"):

* `up`: children by a value of their parent: an enum value (stated or negated), a
  linked name, the parent's label ("高风险设备的合同有哪些", "How many contracts of
  devices whose manager is Omar Haddad are there?", "Probe的合同有哪些"), now and
  then with a value of the child's own ("高风险设备的银牌合同");
* `down`: parents by a value some child of theirs holds ("有银牌合同的设备有哪些",
  "Which devices have a silver contract?"), or a child's linked name ("... a
  contract whose vendor is Juniper", which the reader does not state yet);
* `none_value`: parents none of whose children holds a value ("没有银牌合同的设备",
  "Which devices have no silver contract?"): the plan language cannot state it, so
  only an abstention is right;
* `presence`: objects with some related row, or none ("没有合同的设备", "Which
  contracts have no device?"): a child whose key names only the other tenant's
  parent has none;
* `group_field` / `group_object`: children counted per value of the parent's
  field, or per parent ("How many contracts per device risk level?", "每个设备有多少合同"),
  now and then only those holding a value of their own ("每个设备有多少银牌合同").

The oracle reads the relation as SPEC does: a child's parent is the row of its
own tenant whose id its key holds (none when the key is empty, names no row, or
names a row only the other tenant holds), a condition on it holds when that
parent meets it; a parent meets a condition on its children when some child of
its tenant does. A value word of a field the asked entity holds itself is not
kept from the related one: "高风险设备的合同" is about the devices' risk even when
contracts have a risk of their own (tagged `rel:shared`), and an answer that reads
it as the contracts' own is WRONG.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from generated.model import TENANTS, Deployment, Entity, Field, Relation, Row
from generated.questions import (
    At,
    Cond,
    Question,
    _nouns,
    _pick,
    _syn,
    _value,
    _word,
    _yes_no,
)
from hypothesis import strategies as st

SEPARATOR = "."


def _fields_apart(of: Entity, other: Entity, kinds: tuple[str, ...]) -> list[Field]:
    """`of`'s column fields of these kinds whose concept `other` does not hold."""
    held = {f.name for f in other.fields}
    return [f for f in _fields(of, kinds) if f.name not in held]


def _fields(of: Entity, kinds: tuple[str, ...]) -> list[Field]:
    return [f for f in of.fields if f.sql is not None and f.kind in kinds]


def _shared(q_entity: Entity, f: Field) -> set[str]:
    """A tag when the asked entity holds the related field's concept too."""
    return {"rel:shared"} if any(g.name == f.name for g in q_entity.fields) else set()


def _article(word: str) -> str:
    return "an" if word[:1].casefold() in "aeiou" else "a"


# -- up: children by their parent ---------------------------------------------------

UP_TEMPLATES = {
    ("zh", "list"): ("{p}的{c}有哪些", "列出{p}的{c}"),
    ("zh", "count"): ("{p}的{c}有多少个", "有多少个{p}的{c}"),
    ("zh", "existence"): ("有没有{p}的{c}",),
    ("en", "list"): ("List the {c} of {p}", "Which {c} belong to {p}?"),
    ("en", "count"): ("How many {c} of {p} are there?",),
    ("en", "existence"): ("Are there any {c} of {p}?",),
}


def _parent_phrase(draw: st.DrawFn, at: At, parent: Entity, c: Cond) -> str:
    if at.zh:
        # a bare value word runs into the noun ("高风险设备"), or takes 的 as a phrase does
        plain = c.kind in ("value", "bool") and not any(w in c.text for w in ("为", "是"))
        bare = plain and draw(st.booleans())
        return f"{c.text}{'' if bare else '的'}{parent.noun.zh}"
    if c.before_noun:
        return f"{c.text} {parent.noun.en_plural}"
    return f"{parent.noun.en_plural} {c.text}"


def _parent_cond(draw: st.DrawFn, at: At, rel: Relation, parent: Entity) -> Cond | None:
    """A condition on the parent: an enum value, a yes/no, a name its rows hold, or its
    label."""
    fields = _fields(parent, ("enum", "text", "bool"))
    theirs = At(at.dep, parent, at.tenant, at.lang, at.gaps)
    if fields and draw(st.integers(0, 3)):
        f = draw(st.sampled_from(fields))
        if f.kind == "enum":
            c = _value(draw, theirs, f)
            if c.kind == "any_value":
                return None
        elif f.kind == "bool":
            if "bool_conditions" in at.gaps:
                return None
            c = _yes_no(draw, theirs, f)
        else:
            names = sorted({v for v in theirs.seen(f) if isinstance(v, str)})
            if not names:
                return None
            name = draw(st.sampled_from(names))
            syn = _syn(draw, f.concept, at.lang)
            text = f"{syn}为{name}" if at.zh else f"whose {syn} is {name}"
            c = Cond("name", f.name, text, name)
        return replace(c, field=f"{rel.name}{SEPARATOR}{c.field}")
    labels = sorted({str(r["label"]) for r in at.dep.rows_of(at.tenant, parent.name)})
    if not labels:
        return None
    label = draw(st.sampled_from(labels))
    return Cond("name", f"{rel.name}{SEPARATOR}label", label, label)


@st.composite
def up_question(draw: st.DrawFn, at: At, rel: Relation, qtype: str) -> Question | None:
    parent = at.dep.entity(rel.parent)
    c = _parent_cond(draw, at, rel, parent)
    if c is None:
        return None
    conds = [c]
    label = c.field.endswith(f"{SEPARATOR}label")
    phrase = c.text if label else _parent_phrase(draw, at, parent, c)
    noun = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
    own = [f for f in _fields_apart(at.ent, parent, ("enum",)) if f.concept.values]
    if own and not label and draw(st.integers(0, 3)) == 0:
        f = draw(st.sampled_from(own))
        v = draw(st.sampled_from(f.concept.values))
        word = _word(draw, v.spellings, at.lang)
        conds.append(Cond("value", f.name, word, v.canon, before_noun=True))
        noun = f"{word}{noun}" if at.zh else f"{word} {noun}"
    if label and not at.zh and qtype == "list" and draw(st.booleans()):
        text = f"Which {noun} does {c.text} have?"
    else:
        text = _pick(draw, UP_TEMPLATES[at.lang, qtype]).format(p=phrase, c=noun)
    tags = {"rel:up", f"rel:up:{c.kind}", *(f"cond:{k.kind}" for k in conds[1:])}
    if label:
        tags.add("rel:up:label")
    else:
        tags |= _shared(at.ent, parent.field(c.field.split(SEPARATOR)[1]))
    return Question(text, at.lang, qtype, at.ent.name, at.tenant, tuple(conds), (), frozenset(tags))


# -- down: parents by some child ----------------------------------------------------

DOWN_TEMPLATES = {
    ("zh", "list"): ("有{c}的{p}有哪些",),
    ("zh", "count"): ("有{c}的{p}有多少个",),
    ("zh", "existence"): ("有没有有{c}的{p}",),
    ("en", "list"): ("Which {p} have {c}?",),
    ("en", "count"): ("How many {p} have {c}?",),
    ("en", "existence"): ("Are there any {p} with {c}?",),
}


NONE_TEMPLATES = {
    ("zh", "list"): ("没有{c}的{p}有哪些",),
    ("zh", "count"): ("没有{c}的{p}有多少个",),
    ("zh", "existence"): ("有没有没有{c}的{p}",),
    ("en", "list"): ("Which {p} have no {c}?",),
    ("en", "count"): ("How many {p} have no {c}?",),
    ("en", "existence"): ("Are there any {p} with no {c}?",),
}


@st.composite
def down_question(draw: st.DrawFn, at: At, rel: Relation, qtype: str) -> Question | None:
    child = at.dep.entity(rel.child)
    theirs = At(at.dep, child, at.tenant, at.lang, at.gaps)
    enums = [f for f in _fields(child, ("enum",)) if f.concept.values]
    texts = _fields(child, ("text",))
    noun = child.noun.zh if at.zh else child.noun.en
    if enums and (not texts or draw(st.integers(0, 3))):
        f = draw(st.sampled_from(enums))
        v = draw(st.sampled_from(f.concept.values))
        word = _word(draw, v.spellings, at.lang)
        c = Cond("value", f"{rel.inverse}{SEPARATOR}{f.name}", word, v.canon)
        phrase = f"{word}{noun}" if at.zh else f"{_article(word)} {word} {noun}"
        if draw(st.integers(0, 4)) == 0:
            # no child holds it: the plan language cannot state it (docs/plan-language.md),
            # so only an abstention is right; "has a child without it" is WRONG
            c = replace(c, kind="none_value")
            templates = NONE_TEMPLATES[at.lang, qtype]
            parents = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
            bare = f"{word}{noun}" if at.zh else f"{word} {noun}"
            text = _pick(draw, templates).format(p=parents, c=bare)
            tags = frozenset({"rel:down", "rel:down:none_value", *_shared(at.ent, f)})
            return Question(text, at.lang, qtype, at.ent.name, at.tenant, (c,), (), tags)
    elif texts:
        f = draw(st.sampled_from(texts))
        names = sorted({v for v in theirs.seen(f) if isinstance(v, str)})
        if not names:
            return None
        name = draw(st.sampled_from(names))
        syn = _syn(draw, f.concept, at.lang)
        c = Cond("name", f"{rel.inverse}{SEPARATOR}{f.name}", name, name)
        phrase = (
            f"{syn}为{name}的{noun}" if at.zh else f"{_article(noun)} {noun} whose {syn} is {name}"
        )
    else:
        return None
    parents = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
    text = _pick(draw, DOWN_TEMPLATES[at.lang, qtype]).format(p=parents, c=phrase)
    tags = frozenset({"rel:down", f"rel:down:{c.kind}", *_shared(at.ent, f)})
    return Question(text, at.lang, qtype, at.ent.name, at.tenant, (c,), (), tags)


# -- breakdowns of children by their parent -----------------------------------------

GROUP_FIELD_TEMPLATES = {
    "zh": ("每个{p}{f}有多少{c}", "按{p}{f}统计{c}", "各{p}{f}的{c}数"),
    "en": (
        "How many {c} per {p} {f}?",
        "How many {c} are there by {p} {f}?",
        "Give me a breakdown of {c} by {p} {f}",
    ),
}
GROUP_OBJECT_TEMPLATES = {
    "zh": ("每个{p}有多少{c}", "每个{p}的{c}数"),
    "en": ("How many {c} does each {p} have?", "Give me a breakdown of {c} by {p}"),
}


@st.composite
def group_question(draw: st.DrawFn, at: At, rel: Relation) -> Question:
    parent = at.dep.entity(rel.parent)
    fields = [f for f in _fields(parent, ("enum", "text", "bool")) if _nouns(f.concept, at.lang)]
    p = parent.noun.zh if at.zh else parent.noun.en
    c = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
    conds: tuple[Cond, ...] = ()
    own = [f for f in _fields_apart(at.ent, parent, ("enum",)) if f.concept.values]
    if own and draw(st.integers(0, 2)) == 0:
        # only some children counted: "How many silver contracts does each device have?"
        f = draw(st.sampled_from(own))
        v = draw(st.sampled_from(f.concept.values))
        word = _word(draw, v.spellings, at.lang)
        conds = (Cond("value", f.name, word, v.canon, before_noun=True),)
        c = f"{word}{c}" if at.zh else f"{word} {c}"
    if fields and draw(st.booleans()):
        f = draw(st.sampled_from(fields))
        word = _pick(draw, _nouns(f.concept, at.lang))
        text = _pick(draw, GROUP_FIELD_TEMPLATES[at.lang]).format(p=p, f=word, c=c)
        tags = {"rel:group_field", f"group:{rel.name}{SEPARATOR}{f.name}", *_shared(at.ent, f)}
    else:
        text = _pick(draw, GROUP_OBJECT_TEMPLATES[at.lang]).format(p=p, c=c)
        tags = {"rel:group_object", f"group:{rel.name}"}
    tags |= {"rel:group_filtered"} if conds else set()
    return Question(text, at.lang, "breakdown", at.ent.name, at.tenant, conds, tags=frozenset(tags))


PRESENCE_TEMPLATES = {
    ("zh", "list", False): ("没有{r}的{n}有哪些",),
    ("zh", "count", False): ("没有{r}的{n}有多少个",),
    ("zh", "existence", False): ("有没有没有{r}的{n}",),
    ("en", "list", False): ("Which {n} have no {r}?", "Which {n} are without {a} {r}?"),
    ("en", "count", False): ("How many {n} have no {r}?",),
    ("en", "existence", False): ("Are there any {n} without {a} {r}?",),
    ("zh", "list", True): ("有{r}的{n}有哪些",),
    ("zh", "count", True): ("有{r}的{n}有多少个",),
    ("zh", "existence", True): ("有没有有{r}的{n}",),
    ("en", "list", True): ("Which {n} have {a} {r}?",),
    ("en", "count", True): ("How many {n} have {a} {r}?",),
    ("en", "existence", True): ("Are there any {n} with {a} {r}?",),
}


@st.composite
def presence_question(draw: st.DrawFn, at: At, rel: Relation, qtype: str) -> Question:
    """Objects with no related row, or with some: a child with no parent of its tenant
    (its key empty, naming no row, or a row only the other tenant holds), a parent
    with no child ("没有合同的设备", "Which contracts have no device?")."""
    up = rel.child == at.ent.name
    other = at.dep.entity(rel.parent if up else rel.child).noun
    some = draw(st.booleans())
    word = other.zh if at.zh else other.en
    noun = at.ent.noun.zh if at.zh else at.ent.noun.en_plural
    template = _pick(draw, PRESENCE_TEMPLATES[at.lang, qtype, some])
    text = template.format(r=word, n=noun, a=_article(word))
    name = rel.name if up else rel.inverse
    c = Cond("related" if some else "no_related", f"{name}{SEPARATOR}id", word)
    tags = {"rel:presence", f"rel:presence:{'up' if up else 'down'}_{'some' if some else 'none'}"}
    return Question(text, at.lang, qtype, at.ent.name, at.tenant, (c,), (), frozenset(tags))


@st.composite
def related_question(draw: st.DrawFn, at: At, qtype: str) -> Question | None:
    """A question across one of the asked entity's relations, or None (it has none)."""
    ups = [r for r in at.dep.relations if r.child == at.ent.name]
    downs = [r for r in at.dep.relations if r.parent == at.ent.name]
    if not ups and not downs:
        return None
    if ups and (qtype == "breakdown" or draw(st.integers(0, 3)) == 0):
        # a child's rows per parent: as often as a condition on the parent
        return draw(group_question(at, draw(st.sampled_from(ups))))
    if qtype == "breakdown":
        return None
    if draw(st.integers(0, 4)) == 0:
        return draw(presence_question(at, draw(st.sampled_from(ups + downs)), qtype))
    if ups and (not downs or draw(st.booleans())):
        return draw(up_question(at, draw(st.sampled_from(ups)), qtype))
    return draw(down_question(at, draw(st.sampled_from(downs)), qtype))


# -- the oracle ---------------------------------------------------------------------


def relation_of(dep: Deployment, entity: str, name: str) -> tuple[Relation, bool]:
    """The relation `name` of `entity` and whether it leads up (to the parent)."""
    for rel in dep.relations:
        if rel.child == entity and rel.name == name:
            return rel, True
        if rel.parent == entity and rel.inverse == name:
            return rel, False
    raise KeyError((entity, name))


def related_rows(
    dep: Deployment, tenant: str, entity: str, name: str, row: Row, *, bound: bool = True
) -> tuple[Relation, bool, list[tuple[str, Row]]]:
    """(tenant, row) of every row the relation `name` reaches from the row: its parent
    (at most one), or its children. `bound=False` is the careless join that forgets
    the tenant on the related table: what the isolation cases tell apart."""
    rel, up = relation_of(dep, entity, name)
    tenants = (tenant,) if bound else TENANTS
    if up:
        key = row.get(rel.key)
        found = [(t, r) for t in tenants for r in dep.rows_of(t, rel.parent) if r["id"] == key]
        return rel, up, found[:1] if bound else found
    found = [
        (t, r) for t in tenants for r in dep.rows_of(t, rel.child) if r.get(rel.key) == row["id"]
    ]
    return rel, up, found


def related_holds(
    dep: Deployment,
    tenant: str,
    entity: str,
    c: Cond,
    row: Row,
    *,
    holds: Any,
    facts_of: Any,
    bound: bool = True,
) -> bool | None:
    """A condition across a relation: on the row's parent, or on some child of the row
    (Kleene's OR over them); a related row of the other tenant is never one."""
    name, field = c.field.split(SEPARATOR)
    rel, up, related = related_rows(dep, tenant, entity, name, row, bound=bound)
    if c.kind in ("related", "no_related"):  # some related row, or none
        return bool(related) is (c.kind == "related")
    none = c.kind == "none_value"  # no related row holds the value
    inner = replace(c, field=field, kind="value" if none else c.kind)
    target = rel.parent if up else rel.child
    results = [holds(inner, r, facts_of(dep, t, target, str(r["id"]))) for t, r in related]
    some = True if any(r is True for r in results) else None if None in results else False
    return some if not none or some is None else not some


def related_groups(
    dep: Deployment, q: Question, name: str, keep: Any = None
) -> tuple[Counter[Any], str]:
    """The tenant's children (those `keep` keeps) counted per parent (its id) or per
    the parent's value, and the kind of field the keys are (an id is read as text)."""
    head, _, field = name.partition(SEPARATOR)
    rel, _ = relation_of(dep, q.entity, head)
    out: Counter[Any] = Counter()
    for child in dep.rows_of(q.tenant, q.entity):
        if keep is not None and not keep(child):
            continue
        parent = dep.parent_of(q.tenant, rel, child)
        if parent is None:
            out[None] += 1
        else:
            out[parent[field] if field else parent["id"]] += 1
    kind = dep.entity(rel.parent).field(field).kind if field else "text"
    return out, kind


def labels_problems(dep: Deployment, q: Question, data: dict[str, Any], name: str) -> list[str]:
    """Each group of a parent is shown by that parent's label."""
    rel, _ = relation_of(dep, q.entity, name)
    labels = {str(r["id"]): r["label"] for r in dep.rows_of(q.tenant, rel.parent)}
    out = []
    for g in data.get("groups") or []:
        key = (g.get("keys") or [None])[0]
        shown = (g.get("labels") or [None])[0]
        if key is not None and shown != labels.get(str(key)):
            out.append(f"group {key!r} shown as {shown!r}, is {labels.get(str(key))!r}")
    return out
