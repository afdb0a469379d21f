"""The n-gram fallback index: no false negatives, CJK terms of 1-3+ characters, both dialects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import tenant_transaction
from qdsl.facts.demo.tables import TABLES_BY_NAME
from qdsl.facts.textindex import candidate_ids_query, grams_for_term, grams_for_text


def test_grams_for_term_shapes() -> None:
    assert grams_for_term("港") == ("港",)
    assert grams_for_term("港股") == ("港股",)
    assert grams_for_term("港股通") == ("港股", "股通")
    assert grams_for_term("沪深A股") == ("a股", "沪深", "深a")
    assert grams_for_term(" Ａ-Share ") == ("-s", "a-", "ar", "ha", "re", "sh")
    assert grams_for_term("   ") == ()
    assert grams_for_term("ingress gate")[:2] == (" g", "at")


def test_whitespace_only_grams_are_not_indexed() -> None:
    grams = grams_for_text("a  b")
    assert " " not in grams and "a " in grams and " b" in grams


CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF)
TEXT = st.text(
    alphabet=st.one_of(CJK, st.sampled_from("aAbB -ＡＢ股港　")), min_size=1, max_size=40
)


@settings(max_examples=200, deadline=None)
@given(text=TEXT, data=st.data())
def test_every_substring_term_is_a_candidate(text: str, data: st.DataObject) -> None:
    norm = normalize_text(text)
    if not norm:
        return
    start = data.draw(st.integers(0, len(norm) - 1))
    end = data.draw(st.integers(start + 1, len(norm)))
    term = norm[start:end]
    if not normalize_text(term):
        return
    # Sound: whatever LIKE would confirm, the gram filter lets through.
    assert set(grams_for_term(term)) <= grams_for_text(text)


def _search(engine: Engine, tenant: str, entity: str, term: str) -> tuple[set[str], set[str]]:
    """(candidates from text_grams, confirmed by substring over normalized columns)."""
    spec = demo_catalog().entity(entity)
    table = TABLES_BY_NAME[spec.table]
    with tenant_transaction(engine, tenant, read_only=True) as conn:
        cand = set(conn.execute(candidate_ids_query(tenant, entity, term)).scalars())
        rows = conn.execute(
            select(table.c[spec.id], *(table.c[c] for c in spec.text_search)).where(
                table.c.tenant_id == tenant
            )
        ).all()
    norm = normalize_text(term)
    exact = {str(r[0]) for r in rows if any(v and norm in normalize_text(v) for v in r[1:])}
    return cand, exact


@pytest.mark.parametrize(
    ("tenant", "entity", "term", "expected"),
    [
        ("t1", "project", "港", {"63", "68"}),  # one character
        ("t1", "project", "港股", {"63", "68"}),  # two: no trigram exists
        ("t1", "project", "港股通", {"63"}),  # three
        ("t2", "project", "港股", {"84"}),
        ("t2", "project", "A股", set()),
        ("t1", "doc", "架构", {"3", "4"}),
        ("t1", "doc", "入口闸门", {"3", "6"}),
        ("t1", "doc", "verifier", {"2", "7"}),
        ("t1", "doc", "Ingress Gate", {"2", "5"}),
        ("t1", "run", "timeout", {"15"}),
        ("t1", "task", "闸门", {"1"}),
        ("t3", "project", "Project 0064", {"64"}),
    ],
)
def test_gram_search_on_both_dialects(
    engine: Engine, tenant: str, entity: str, term: str, expected: set[str]
) -> None:
    cand, exact = _search(engine, tenant, entity, term)
    assert exact == expected
    assert exact <= cand
    assert cand & exact == expected


def test_gram_search_is_tenant_bound(engine: Engine) -> None:
    cand, _ = _search(engine, "t2", "project", "a股")
    assert cand == set()
    with pytest.raises(ValueError, match="empty"):
        candidate_ids_query("t1", "project", "  ")
