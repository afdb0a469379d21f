"""Yes/no fields are conditions: alone, negated and in conjunctions, zh and en.

Read on a small HR catalog (tests/deployments/staff: `employee.remote`,
`site.active`) and on the demo and support-desk catalogs each given one bool
field, so nothing here depends on one catalog's words. The words of each state
come from the catalog (the field's synonyms state true; `aliases.true` /
`aliases.false` name the states); negation is the reader's own.
"""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog, CatalogError, catalog_from_mapping, load_catalog
from qdsl.dsl.ir import Operator, QueryType
from qdsl.dsl.question import Reading, problems_text, read_question

NOW = datetime(2026, 11, 4, 15, 30, tzinfo=UTC)
DEPLOYMENTS = Path(__file__).parents[1] / "deployments"
STAFF = load_catalog(DEPLOYMENTS / "staff" / "catalog.toml")
_FACTS_DIR = Path(__file__).parents[2] / "facts" / "demo"


def _with_flag(path: Path, entity: str, name: str, **spec: Any) -> Catalog:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    raw["entities"][entity]["fields"][name] = {"column": name, "type": "bool", **spec}
    return catalog_from_mapping(raw, source=path.name)


DEMO = _with_flag(
    _FACTS_DIR / "catalog.toml",
    "project",
    "archived",
    operators=["equals", "not_equals"],
    synonyms=["已归档", "归档", "archived"],
)
TICKETS = _with_flag(
    DEPLOYMENTS / "tickets" / "catalog.toml",
    "ticket",
    "escalated",
    operators=["equals", "not_equals", "is_null"],
    synonyms=["已升级", "升级", "escalated"],
    aliases={"false": ["normal handling"]},
)
CATALOGS = {"staff": STAFF, "demo": DEMO, "tickets": TICKETS}

_Q, _O = QueryType, Operator
Cond = tuple[str, Operator, object]


def read(question: str, cat: str = "staff") -> Reading:
    return read_question(question, CATALOGS[cat], now=NOW)


def conds(r: Reading) -> set[Cond]:
    return {(c.field, c.operator, c.value) for c in r.conditions}


SH, SENIOR = ("city", _O.EQUALS, "shanghai"), ("level", _O.EQUALS, "senior")
REMOTE, ONSITE = ("remote", _O.EQUALS, True), ("remote", _O.EQUALS, False)
ACTIVE, INACTIVE = ("active", _O.EQUALS, True), ("active", _O.EQUALS, False)

# (catalog, question, query type, entity, conditions)
READINGS: list[tuple[str, str, QueryType, str, set[Cond]]] = [
    # the rows
    ("staff", "在上海远程办公的高级员工有哪些", _Q.LIST, "employee", {SH, SENIOR, REMOTE}),
    ("staff", "How many employees are not remote?", _Q.COUNT, "employee", {ONSITE}),
    ("staff", "How many active sites are there?", _Q.COUNT, "site", {ACTIVE}),
    # alone
    ("staff", "远程办公的员工有多少个", _Q.COUNT, "employee", {REMOTE}),
    ("staff", "How many remote employees are there?", _Q.COUNT, "employee", {REMOTE}),
    ("staff", "Which employees work remotely?", _Q.LIST, "employee", {REMOTE}),
    ("staff", "有多少个启用的站点", _Q.COUNT, "site", {ACTIVE}),
    ("staff", "List the active sites", _Q.LIST, "site", {ACTIVE}),
    # the false state's own words
    ("staff", "Which sites are inactive?", _Q.LIST, "site", {INACTIVE}),
    ("staff", "已停用的站点有哪些", _Q.LIST, "site", {INACTIVE}),
    ("staff", "Are there inactive sites?", _Q.EXISTENCE, "site", {INACTIVE}),
    ("staff", "坐班的员工有哪些", _Q.LIST, "employee", {ONSITE}),
    ("staff", "Which employees work on-site?", _Q.LIST, "employee", {ONSITE}),
    # negated
    ("staff", "非远程的员工有多少", _Q.COUNT, "employee", {ONSITE}),
    ("staff", "不是远程办公的员工有哪些", _Q.LIST, "employee", {ONSITE}),
    ("staff", "没有远程办公的员工有哪些", _Q.LIST, "employee", {ONSITE}),
    ("staff", "Which sites are not active?", _Q.LIST, "site", {INACTIVE}),
    ("staff", "List the sites that are not inactive", _Q.LIST, "site", {ACTIVE}),
    # in conjunctions
    (
        "staff",
        "北京的非远程员工有几个",
        _Q.COUNT,
        "employee",
        {("city", _O.EQUALS, "beijing"), ONSITE},
    ),
    (
        "staff",
        "Are there any remote junior employees in Shenzhen?",
        _Q.EXISTENCE,
        "employee",
        {REMOTE, ("level", _O.EQUALS, "junior"), ("city", _O.EQUALS, "shenzhen")},
    ),
    (
        "staff",
        "Which senior employees in Shanghai work remotely?",
        _Q.LIST,
        "employee",
        {SH, SENIOR, REMOTE},
    ),
    # the field's name beside one of its state words names the field
    ("staff", "Which sites have active false?", _Q.LIST, "site", {INACTIVE}),
    # the demo and the support desk, each with one bool field
    ("demo", "有多少个已归档的项目", _Q.COUNT, "project", {("archived", _O.EQUALS, True)}),
    (
        "demo",
        "Which A-share projects are not archived?",
        _Q.LIST,
        "project",
        {("archived", _O.EQUALS, False), ("market_theme", _O.EQUALS_OR_ALIAS, "A股")},
    ),
    (
        "tickets",
        "有多少个已升级的紧急工单",
        _Q.COUNT,
        "ticket",
        {("escalated", _O.EQUALS, True), ("priority", _O.EQUALS, "urgent")},
    ),
    ("tickets", "未升级的工单有哪些", _Q.LIST, "ticket", {("escalated", _O.EQUALS, False)}),
    (
        "tickets",
        "How many escalated tickets came in by phone?",
        _Q.COUNT,
        "ticket",
        {("escalated", _O.EQUALS, True), ("channel", _O.EQUALS, "phone")},
    ),
    (
        "tickets",
        "Which urgent tickets get normal handling?",
        _Q.LIST,
        "ticket",
        {("escalated", _O.EQUALS, False), ("priority", _O.EQUALS, "urgent")},
    ),
]


@pytest.mark.parametrize(("cat", "question", "qt", "entity", "expected"), READINGS)
def test_a_yes_no_field_is_a_condition(
    cat: str, question: str, qt: QueryType, entity: str, expected: set[Cond]
) -> None:
    r = read(question, cat)
    assert r.problems == (), problems_text(r.problems, r.entity, r.language)
    assert (r.query_type, r.entity) == (qt, entity)
    assert conds(r) == expected
    assert all(type(c.value) is bool for c in r.conditions if c.field in ("remote", "active"))


def test_one_objects_yes_no_attribute_is_shown_not_filtered() -> None:
    r = read("Is employee E-4 remote?")
    assert (r.query_type, r.projection) == (QueryType.STATUS, ("remote",))
    assert conds(r) == {("id", Operator.EQUALS, "E-4")}
    # "…吗" asks yes or no: whether E-4 is one of the remote employees
    r = read("员工 E-4 是远程办公吗")
    assert r.query_type is QueryType.EXISTENCE
    assert conds(r) == {("id", Operator.EQUALS, "E-4"), REMOTE}


@pytest.mark.parametrize("question", ["remote and on-site employees", "远程办公和坐班的员工有哪些"])
def test_both_states_of_one_field_clarify(question: str) -> None:
    r = read(question)
    assert not r.understood
    assert [p.detail for p in r.problems] == ["both_states"]
    text = problems_text(r.problems, r.entity, r.language)
    assert ("both yes and no" in text) if r.language == "en" else ("既说是又说否" in text)


def test_a_bool_fields_aliases_are_its_two_states() -> None:
    raw = tomllib.loads((DEPLOYMENTS / "staff" / "catalog.toml").read_text(encoding="utf-8"))
    raw["entities"]["site"]["fields"]["active"]["aliases"] = {"closed": ["停用"]}
    with pytest.raises(CatalogError) as info:
        catalog_from_mapping(raw)
    assert "aliases.closed" in str(info.value.details)


# Hypothesis: a yes/no field's word, alone or negated, in any of these frames, is
# always a condition of the asked state, a field shown, or a problem: never dropped.
_FRAMES = (
    "How many {neg}{word} {ent} are there?",
    "Which {ent} are {neg}{word}?",
    "{neg}{word}的{ent}有哪些",
    "有多少个{neg}{word}的{ent}",
    "List the {neg}{word} {ent}",
)
_WORDS = {
    ("staff", "employee", "remote"): (["remote", "远程办公", "远程"], ["on-site", "坐班"]),
    ("staff", "site", "active"): (["active", "启用", "在用"], ["inactive", "已停用", "停用"]),
    ("tickets", "ticket", "escalated"): (["escalated", "已升级"], ["normal handling"]),
    ("demo", "project", "archived"): (["archived", "已归档"], []),
}
_ENTITY_WORDS = {
    "employee": ["employees", "员工"],
    "site": ["sites", "站点"],
    "ticket": ["tickets", "工单"],
    "project": ["projects", "项目"],
}


@st.composite
def _flag_questions(draw: st.DrawFn) -> tuple[str, str, str, bool]:
    (cat, ent, field), (true_words, false_words) = draw(st.sampled_from(sorted(_WORDS.items())))
    state = draw(st.booleans()) if false_words else True
    word = draw(st.sampled_from(true_words if state else false_words))
    negated = draw(st.booleans())
    frame = draw(st.sampled_from(_FRAMES))
    zh = "的" in frame or frame.startswith("有")
    entity = draw(st.sampled_from(_ENTITY_WORDS[ent]))
    neg = ("非" if zh else "not ") if negated else ""
    question = frame.format(neg=neg, word=word, ent=entity)
    return cat, field, question, state != negated


@given(_flag_questions())
def test_a_yes_no_word_never_silently_disappears(case: tuple[str, str, str, bool]) -> None:
    cat, field, question, state = case
    r = read(question, cat)
    stated = [c for c in r.conditions if c.field == field]
    if stated:
        assert [(c.operator, c.value) for c in stated] == [(Operator.EQUALS, state)], question
    else:
        assert field in r.projection or r.problems, question
