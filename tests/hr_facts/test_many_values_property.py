"""Properties of many-valued facts: the executor states exactly the values an
oracle computes from the facts stored, and a compare tells sets apart as sets.

Each example loads, for a tenant of its own, one employee's skills as a
deployer would (`qdsl.facts.load.load_facts`): values drawn from alias
spellings of one value, values differing only in case or width, and plain
ones, stated by one to three sources, sometimes more than the bound. The
oracle reads the stored facts back with hand-written SQL and computes, in
Python: the distinct `value_norm`s in code-point order (byte order of UTF-8,
as both dialects sort them), the first `FACT_VALUES_CAP` of them, each as its
alias group's canonical value or its first fact's text, and the count when
there are more.
"""

from __future__ import annotations

import itertools
from typing import Any

import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.compile import FACT_VALUES_CAP
from qdsl.executor.run import execute
from qdsl.facts.load import load_facts
from qdsl.many_values import set_difference

_TENANTS = itertools.count()
_SPELLINGS = ["ML", "Machine Learning", "机器学习", "PostgreSQL", "Postgres", "Go", "GO", "ｇｏ"]
_PLAIN = st.text(alphabet="abcxyz技能数据 ", min_size=1, max_size=6).filter(
    lambda t: normalize_text(t) != ""
)
_VALUES = st.lists(st.one_of(st.sampled_from(_SPELLINGS), _PLAIN), min_size=1, max_size=30)
_SOURCES = st.sampled_from(["hr:profile", "review:2026", "import:ldap"])


def _load(engine: Engine, catalog: Catalog, tenant: str, facts: list[tuple[str, str]]) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO employees (tenant_id, id, name, level, city, department_id) "
                "VALUES (:t, 'E-1', 'Probe', 'junior', 'Shanghai', NULL)"
            ),
            {"t": tenant},
        )
    seen: set[tuple[str, str]] = set()
    rows = []
    for source, value in facts:
        if (source, normalize_text(value)) in seen:
            continue  # one source states a value once
        seen.add((source, normalize_text(value)))
        rows.append(
            {
                "tenant_id": tenant,
                "entity_type": "employee",
                "entity_id": "E-1",
                "predicate": "skill",
                "value_text": value,
                "source_ref": source,
            }
        )
    load_facts(rows, engine=engine, catalog=catalog)


def _oracle(engine: Engine, catalog: Catalog, tenant: str) -> tuple[tuple[str, ...], int | None]:
    with engine.connect() as conn:
        stored = conn.execute(
            sa.text(
                "SELECT id, value_text, value_norm FROM semantic_facts "
                "WHERE tenant_id = :t AND predicate = 'skill' ORDER BY id"
            ),
            {"t": tenant},
        ).all()
    first_text: dict[str, str] = {}
    for _id, text, norm in stored:
        first_text.setdefault(norm, text)
    norms = sorted(first_text)
    groups = catalog.entities["employee"].fields["skill"].alias_lookup
    shown: dict[str, str] = {}
    for norm in norms[:FACT_VALUES_CAP]:
        group = groups.get(norm)
        key = ("=" + group[0]) if group else norm
        shown.setdefault(key, group[0] if group else first_text[norm])
    return tuple(shown.values()), (len(norms) if len(norms) > FACT_VALUES_CAP else None)


@settings(max_examples=25)
@given(values=_VALUES, sources=st.lists(_SOURCES, min_size=1, max_size=30))
def test_a_snapshot_states_what_the_oracle_computes(
    hr_engine: Engine, hr_catalog: Catalog, values: list[str], sources: list[str]
) -> None:
    tenant = f"prop-{next(_TENANTS)}"
    facts = [(sources[i % len(sources)], v) for i, v in enumerate(values)]
    _load(hr_engine, hr_catalog, tenant, facts)
    bound = compile_source(
        'status employee where id = "E-1"', hr_catalog, PlanContext(tenant_id=tenant)
    ).bound
    assert bound is not None
    (row,) = execute(bound, hr_catalog, hr_engine, tenant).rows
    want, held = _oracle(hr_engine, hr_catalog, tenant)
    assert row.facts["skill"] == want
    assert row.facts_cut == ({} if held is None else {"skill": held})


_SETS = st.lists(st.one_of(st.sampled_from(["Go", "go", "ＧＯ", "Rust"]), _PLAIN), max_size=6)


@given(a=_SETS, b=_SETS, order=st.randoms())
def test_a_compare_tells_sets_apart_as_sets(a: list[str], b: list[str], order: Any) -> None:
    shuffled = list(b)
    order.shuffle(shuffled)
    key = {normalize_text(v) for v in a}, {normalize_text(v) for v in b}
    found = set_difference({"x": a, "y": shuffled}, {})
    assert (found is None) == (key[0] == key[1])
    if found is not None:
        common = {normalize_text(v) for v in found["common"]}
        assert common == key[0] & key[1]
        for subject, keys in zip(("x", "y"), key, strict=True):
            only = {normalize_text(v) for v in found["only"].get(subject, [])}
            assert only == keys - common  # what it has that the other lacks
