"""Hostile values are data: they never reach SQL text, come back unharmed and
leave the database as it was."""

from __future__ import annotations

import pytest
from exec_support import CATALOG, NOW
from sqlalchemy import Engine, func, select

from qdsl.dsl.catalog import FieldType
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.compile import compile_plan
from qdsl.executor.run import execute
from qdsl.facts.demo.tables import projects
from qdsl.facts.tables import semantic_facts

HOSTILE = [
    "'; DROP TABLE projects; --",
    '" OR 1=1 --',
    "x' OR tenant_id <> 't1",
    "a; DELETE FROM semantic_facts",
    "/* comment */ t1",
    "nul\x00byte",
    "Аctive",  # Cyrillic А
    "ＡＣＴＩＶＥ",  # full-width
    "%_\\",
    "港股' UNION SELECT * FROM configs --",
    "x" * 100_000,
]

# Every way a value can reach a statement: column text, label, id, enum, fact, fallback.
SHAPES = [
    ("project", "title", Operator.CONTAINS),
    ("project", "title", Operator.EQUALS),
    ("project", "id", Operator.IN),
    ("project", "status", Operator.EQUALS_OR_ALIAS),
    ("project", "market_theme", Operator.EQUALS_OR_ALIAS),
    ("doc", "topic", Operator.CONTAINS),
    ("task", "assignee", Operator.EQUALS),
]


def _refused_enum(entity: str, field: str, value: str) -> bool:
    """Whether the binder refuses `value` outright: an enum takes only its own values,
    so a hostile one never reaches a statement at all (`unknown_value`)."""
    plan = _plan(entity, field, Operator.EQUALS_OR_ALIAS, value)
    if CATALOG.entity(entity).fields[field].type is not FieldType.ENUM:
        return False
    with pytest.raises(PlanError) as info:
        compile_plan(plan, CATALOG, "sqlite", tenant_id="t1")
    return info.value.subtype == "unknown_value"


def _plan(entity: str, field: str, op: Operator, value: str) -> Plan:
    return Plan(
        query_type=QueryType.LIST,
        entity_type=entity,
        filters=(Filter(field=field, operator=op, value=(value,) if op is Operator.IN else value),),
        retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
    )


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v[:20]))
def test_values_never_appear_in_sql_text(value: str) -> None:
    for entity, field, op in SHAPES:
        if field == "status" and normalize_text(value) != "active":
            assert _refused_enum(entity, field, value)
            continue
        for dialect in ("sqlite", "postgresql"):
            compiled = compile_plan(
                _plan(entity, field, op, value), CATALOG, dialect, tenant_id="t1"
            )
            for st in compiled.statements:
                for fragment in {value, value[:40], value.casefold()[:40]}:
                    if len(fragment) >= 3:
                        assert fragment not in st.sql, (entity, field, st.role)


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (
            conn.execute(select(func.count()).select_from(projects)).scalar_one(),
            conn.execute(select(func.count()).select_from(semantic_facts)).scalar_one(),
        )


def test_hostile_values_come_back_as_data(engine: Engine) -> None:
    before = _counts(engine)
    for value in HOSTILE:
        for entity, field, op in SHAPES:
            if field == "status" and normalize_text(value) != "active":
                continue  # refused before any statement (test above)
            result = execute(_plan(entity, field, op, value), CATALOG, engine, "t1", now=NOW)
            # Nothing in the demo data matches these values, and nothing leaked in.
            assert all(r.tenant_id == "t1" for r in result.rows)
            if entity == "project" and field == "title":
                assert result.rows == ()
    assert _counts(engine) == before


def test_like_wildcards_are_literal(engine: Engine) -> None:
    # `%` would match every title if it were a wildcard.
    for value in ("%", "_", "\\"):
        result = execute(
            _plan("project", "title", Operator.CONTAINS, value), CATALOG, engine, "t1", now=NOW
        )
        assert result.rows == ()
