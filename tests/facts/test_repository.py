"""SqlFactsRepository on both dialects: alias lookups, freshness, evidence facts."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.demo.data import (
    DEMO_NOW,
    T1_A_SHARE,
    T1_A_SHARE_FRESH,
    T1_HK,
    T1_RUN_12_ERRORS,
    T2_HK,
    T2_US,
    T2_US_STALE,
    t3_a_share_ids,
)
from qdsl.facts.repository import FactsRepository, SqlFactsRepository, alias_norms

MARKET = demo_catalog().entity("project").fields["market_theme"].aliases


@pytest.fixture
def repo(engine: Engine) -> SqlFactsRepository:
    return SqlFactsRepository(engine)


def _ids(repo: SqlFactsRepository, tenant: str, value: str, **kw: object) -> set[str]:
    facts = repo.lookup(tenant, "project", "market_theme", alias_norms(MARKET, value), **kw)  # type: ignore[arg-type]
    assert {f.tenant_id for f in facts} <= {tenant}
    return {f.entity_id for f in facts}


def test_is_a_facts_repository(repo: SqlFactsRepository) -> None:
    assert isinstance(repo, FactsRepository)


def test_alias_norms_expands_any_spelling_to_the_whole_group() -> None:
    group = alias_norms(MARKET, "A-share")
    assert group == alias_norms(MARKET, "A股") == alias_norms(MARKET, "ａ股")
    assert {"a股", "a-share", "沪深a股", "a shares"} <= group
    assert alias_norms(MARKET, "Unknown Thing") == {"unknown thing"}


@pytest.mark.parametrize("spelling", ["A股", "A-share", "沪深A股", "a shares"])
def test_a_share_lookup_by_any_alias(repo: SqlFactsRepository, spelling: str) -> None:
    assert _ids(repo, "t1", spelling) == T1_A_SHARE
    assert _ids(repo, "t2", spelling) == set()
    assert _ids(repo, "t3", spelling) == t3_a_share_ids()


def test_freshness_drops_stale_facts(repo: SqlFactsRepository) -> None:
    assert _ids(repo, "t1", "A股", fresh_at=DEMO_NOW) == T1_A_SHARE_FRESH
    assert _ids(repo, "t2", "美股") == T2_US
    assert _ids(repo, "t2", "美股", fresh_at=DEMO_NOW) == T2_US - T2_US_STALE


def test_sql_freshness_agrees_with_fact_is_fresh(repo: SqlFactsRepository) -> None:
    for tenant in ("t1", "t2", "t3"):
        for value in ("A股", "港股", "美股"):
            norms = alias_norms(MARKET, value)
            every = repo.lookup(tenant, "project", "market_theme", norms)
            fresh = repo.lookup(tenant, "project", "market_theme", norms, fresh_at=DEMO_NOW)
            assert fresh == tuple(f for f in every if f.is_fresh(DEMO_NOW))


def test_hk_lookup(repo: SqlFactsRepository) -> None:
    assert _ids(repo, "t1", "Hong Kong equities") == T1_HK
    assert _ids(repo, "t2", "港股") == T2_HK


def test_facts_for_entities_and_evidence(repo: SqlFactsRepository) -> None:
    facts = repo.facts_for("t1", "run", ["12"], predicates=["error"])
    assert tuple(f.value_text for f in facts) == T1_RUN_12_ERRORS
    assert {f.source_ref for f in facts} == {"run:12#log"}
    assert all(f.evidence_id == f"fact:{f.id}" for f in facts)
    both = repo.facts_for("t1", "project", ["64", "65"])
    assert {f.entity_id for f in both} == {"64", "65"}
    assert repo.facts_for("t2", "run", ["12"]) == ()
    assert repo.facts_for("t1", "run", []) == ()
    assert repo.facts_for("t1", "run", ["12"], predicates=[]) == ()


def test_tenant_is_data_not_sql(repo: SqlFactsRepository) -> None:
    assert repo.lookup("t1' OR '1'='1", "project", "market_theme", ["a股"]) == ()


def test_dates_come_back_aware_utc(repo: SqlFactsRepository) -> None:
    (fact, *_) = repo.lookup("t1", "project", "market_theme", ["a股"])
    assert fact.observed_at.utcoffset() is not None
    assert fact.observed_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
