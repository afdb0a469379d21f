"""Yes/no fields: every word of a `bool` field states one of its two states.

The field's own spellings (its name and `synonyms`: "remote", "远程办公",
"active") state true; the words the catalog lists under `aliases.true` and
`aliases.false` ("on-site", "已停用", "inactive") state their state; a negation
before any of them ("not remote", "非远程", "不是远程办公的") states the other
one, and so does an absence around the field's name ("没有远程办公的"). Nothing
here names a field or a word: they all come from the catalog.

A mention is a condition `field = state`, except where the question asks one
object's attribute ("Is employee E-4 remote?", "它是远程办公吗"): there the
field is shown, not filtered on. The field's name right beside one of its state
words names the field ("active is false") and states nothing itself. Both states
of one field in one question ("remote and on-site employees") are a problem that
clarifies: no single condition says it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qdsl.dsl.catalog import FieldSpec, FieldType
from qdsl.dsl.ir import Operator, QueryType
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.question.conditions import Builder
from qdsl.dsl.question.model import Kind, Piece, Sense

_JOINS = ("和", "与", "及", "或", "、", ",", "，", " and ", " or ")


@dataclass(frozen=True)
class Mention:
    index: int  # the piece's place in the walk
    field: str
    state: bool  # what the words state, negation applied
    text: str
    named: bool  # the field's own name, not one of its state words


def is_flag(spec: FieldSpec | None) -> bool:
    return spec is not None and spec.type is FieldType.BOOL


def mention(i: int, p: Piece, sense: Sense, negated: bool) -> Mention:
    """What piece `p` (a field name, a state word or an absence/presence around
    the name) states about the yes/no field of `sense`."""
    if p.kind is Kind.ABSENCE:
        state, named = False, False
    elif p.kind is Kind.PRESENCE:
        state, named = True, False
    elif sense.kind is Kind.FIELD:
        state, named = True, True
    else:
        state, named = sense.value != "false", False
    return Mention(i, sense.field or "", state != negated, p.text, named)


def attribute_asked(qt: QueryType | None, pointed: bool) -> bool:
    """An object is pointed at and its attribute asked: the field is shown."""
    # no cue, or one that asks an attribute (`PlannerPolicy.attribute_cue`)
    return pointed and (qt is None or kind_of(qt).policy.attribute_cue)


def _naming(m: Mention, others: Sequence[Mention], b: Builder) -> bool:
    """The field's name right beside one of its own state words ("active is false")."""
    if not m.named:
        return False
    for o in others:
        if o.named or abs(o.index - m.index) != 1:
            continue
        a, z = sorted((b.pieces[m.index], b.pieces[o.index]), key=lambda p: p.start)
        if not any(j in f" {b.gap(a, z)} " for j in _JOINS):
            return True
    return False


def place(b: Builder, main: str, mentions: Sequence[Mention]) -> None:
    """Each yes/no field mentioned becomes one condition (or a problem)."""
    by_field: dict[str, list[Mention]] = {}
    for m in mentions:
        by_field.setdefault(m.field, []).append(m)
    for name, ms in by_field.items():
        stating = [m for m in ms if not _naming(m, ms, b)] or ms
        words = "、".join(dict.fromkeys(m.text for m in stating))
        states = {m.state for m in stating}
        if len(states) > 1:
            b.problem(words, "ambiguous", (f"{name} (true, false)",), "both_states")
            continue
        ops = b.ent(main).fields[name].operators
        if Operator.EQUALS in ops:
            b.add(name, Operator.EQUALS, states.pop(), words)
        else:  # `!= not state` would also take the rows where the field is unset
            allowed = ", ".join(o.value for o in ops)
            b.problem(words, "not_allowed", (f"{name} ({allowed})",))
