"""Compile-time guarantees: catalog identifiers only, values only as bound
parameters, the tenant bound on every table, one statement set per plan shape."""

from __future__ import annotations

import gc
import re
import weakref
from importlib import resources
from pathlib import Path

import pytest
import sqlglot
from exec_support import CATALOG, NOW, sample_plan
from sqlalchemy.dialects import sqlite
from sqlglot import exp

from qdsl.dsl.catalog import load_catalog
from qdsl.dsl.errors import PlanError, PolicyError, QdslError
from qdsl.dsl.ir import Filter, ObjectRef, Operator, Plan, QueryType, RetrievalPolicy, Scope
from qdsl.executor.compile import compile_plan, prepare
from qdsl.executor.statements import STATEMENTS
from qdsl.executor.tables import FACT_COLUMNS, GRAM_COLUMNS, GRAMS_TABLE, entity_columns
from qdsl.executor.templates import registry

PAIRS = sorted(registry(CATALOG))
NAMED = sqlite.dialect(paramstyle="named")  # type: ignore[no-untyped-call]
_POSTCOMPILE = re.compile(r"__\[POSTCOMPILE_(\w+)\]")

CATALOG_TABLES = {e.table for e in CATALOG.entities.values()} | {CATALOG.facts.table, GRAMS_TABLE}
CATALOG_COLUMNS = (
    {c for e in CATALOG.entities.values() for c in entity_columns(e)}
    | set(FACT_COLUMNS)
    | set(GRAM_COLUMNS)
)


def _named_sql(plan: Plan) -> list[tuple[str, str]]:
    prep = prepare(plan, CATALOG, "sqlite", "t1", now=NOW)
    out = []
    for role, stmt in prep.statements.named():
        sql = str(stmt.compile(dialect=NAMED))
        out.append((role, _POSTCOMPILE.sub(lambda m: f":{m.group(1)}", sql)))
    return out


def _all_fallback_plans() -> list[Plan]:
    plans = [sample_plan(e, qt) for e, qt in PAIRS]
    plans.append(
        Plan(
            query_type=QueryType.LIST,
            entity_type="project",
            filters=(
                Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="港股"),
                Filter(field="status", operator=Operator.NOT_IN, value=("closed",)),
            ),
            scope=Scope(referenced_objects=(ObjectRef(entity_type="project", id="64"),)),
            retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
        )
    )
    return plans


@pytest.mark.parametrize(
    "plan", _all_fallback_plans(), ids=lambda p: f"{p.entity_type}.{p.query_type.value}"
)
def test_only_catalog_identifiers_and_tenant_on_every_table(plan: Plan) -> None:
    for role, sql in _named_sql(plan):
        tree = sqlglot.parse_one(sql, read="sqlite")
        # a statement's own CTEs (the main rows joined with their evidence) are not tables
        ctes = {c.alias for c in tree.find_all(exp.CTE)}
        found = [t for t in tree.find_all(exp.Table) if t.name not in ctes]
        # the one table-valued function: SQLite's json_each over the bound ids
        lists = [t for t in found if isinstance(t.this, exp.Anonymous)]
        for t in lists:
            assert t.this.name == "json_each", role
            assert [type(e) for e in t.this.expressions] == [exp.Placeholder], role
        tables = [t for t in found if t not in lists]
        assert tables, role
        assert {t.name for t in tables} <= CATALOG_TABLES, role
        # Besides catalog columns, a statement may only name the labels it defines
        # itself (outputs of its own subqueries), never anything from a value.
        own = {a.alias for a in tree.find_all(exp.Alias)} | ({"value"} if lists else set())
        columns = {c.name for c in tree.find_all(exp.Column)}
        assert columns <= CATALOG_COLUMNS | own, (role, columns - CATALOG_COLUMNS - own)
        # every table reference (by its alias) is bound to :tenant_id
        bound_aliases = set()
        for eq in tree.find_all(exp.EQ):
            left, right = eq.left, eq.right
            if (
                isinstance(left, exp.Column)
                and left.name == "tenant_id"
                and isinstance(right, exp.Placeholder)
                and right.name == "tenant_id"
            ):
                bound_aliases.add(left.table)
        for t in tables:
            assert (t.alias_or_name) in bound_aliases, (role, t.alias_or_name)


def test_sql_text_does_not_change_with_values_or_tenant() -> None:
    def plan(theme: str, statuses: tuple[str, ...], limit: int) -> Plan:
        return Plan(
            query_type=QueryType.LIST,
            entity_type="project",
            filters=(
                Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value=theme),
                Filter(field="status", operator=Operator.IN, value=statuses),
            ),
            limit=limit,
            retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
        )

    a = compile_plan(plan("A股", ("active",), 5), CATALOG, "postgresql", tenant_id="t1", now=NOW)
    b = compile_plan(
        plan("美股", ("active", "paused", "closed"), 50),
        CATALOG,
        "postgresql",
        tenant_id="t2",
        now=NOW,
    )
    assert [s.sql for s in a.statements] == [s.sql for s in b.statements]
    assert a.shape == b.shape
    assert a.statements[0].params != b.statements[0].params


def test_statements_are_built_once_per_shape() -> None:
    STATEMENTS.clear()
    p1 = sample_plan("project", QueryType.EXISTENCE)
    first = prepare(p1, CATALOG, "postgresql", "t1", now=NOW)
    p2 = p1.model_copy(
        update={"filters": (p1.filters[0].model_copy(update={"value": ("closed",)}), p1.filters[1])}
    )
    second = prepare(p2, CATALOG, "postgresql", "t2", now=NOW)
    assert second.statements is first.statements
    assert (STATEMENTS.hits, STATEMENTS.misses) == (1, 1)
    # another dialect or another shape is another entry
    assert prepare(p1, CATALOG, "sqlite", "t1").statements is not first.statements
    p3 = p1.model_copy(update={"filters": p1.filters[:1]})
    assert prepare(p3, CATALOG, "postgresql", "t1").statements is not first.statements


def test_a_catalog_loaded_again_shares_statements_and_is_not_kept(tmp_path: Path) -> None:
    # A deployment catalog (QDSL_CATALOG) is loaded afresh per call: equal content
    # must hit the statement cache, and the executor must not keep each copy alive.
    source = tmp_path / "catalog.toml"
    source.write_text(
        resources.files("qdsl.facts.demo").joinpath("catalog.toml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    STATEMENTS.clear()
    p1 = sample_plan("project", QueryType.EXISTENCE)
    first = prepare(p1, load_catalog(source), "postgresql", "t1", now=NOW)
    copy = load_catalog(source)
    assert prepare(p1, copy, "postgresql", "t1", now=NOW).statements is first.statements
    assert (STATEMENTS.hits, STATEMENTS.misses) == (1, 1)
    alive = weakref.ref(copy)
    del copy
    gc.collect()
    assert alive() is None
    # a catalog that differs is another entry
    text = source.read_text(encoding="utf-8")
    assert "max_limit = 200" in text
    changed = tmp_path / "changed.toml"
    changed.write_text(text.replace("max_limit = 200", "max_limit = 199"), encoding="utf-8")
    assert prepare(p1, load_catalog(changed), "postgresql", "t1").statements is not first.statements


def test_tenant_in_plan_scope_must_match_the_caller() -> None:
    plan = Plan(query_type=QueryType.COUNT, entity_type="project", scope=Scope(tenant_id="t2"))
    with pytest.raises(PolicyError) as info:
        compile_plan(plan, CATALOG, "sqlite", tenant_id="t1")
    assert info.value.code == "policy/tenant_scope_mismatch"
    assert info.value.exit_code == 6


def test_compare_needs_two_subjects() -> None:
    plan = Plan(
        query_type=QueryType.COMPARE,
        entity_type="project",
        scope=Scope(referenced_objects=(ObjectRef(entity_type="project", id="64"),)),
    )
    with pytest.raises(PlanError, match="2 or more subjects"):
        compile_plan(plan, CATALOG, "sqlite", tenant_id="t1")
    by_filter = Plan(
        query_type=QueryType.COMPARE,
        entity_type="project",
        filters=(Filter(field="id", operator=Operator.IN, value=("64", "65")),),
    )
    assert compile_plan(by_filter, CATALOG, "sqlite", tenant_id="t1").template == "project.compare"


@pytest.mark.parametrize(
    ("field", "why"),
    [("owner_email", "sensitive_field"), ("secret", "unknown_field"), ("summary", "unknown_field")],
)
def test_unknown_and_sensitive_fields_fail_closed(field: str, why: str) -> None:
    # The executor binds through the normalizer: the same refusal, the same code
    # (a sensitive field is a policy refusal there, as it is in `qdsl parse`).
    plan = Plan(
        query_type=QueryType.COUNT,
        entity_type="project",
        filters=(Filter(field=field, operator=Operator.EQUALS, value="x"),),
    )
    with pytest.raises(QdslError) as info:
        compile_plan(plan, CATALOG, "sqlite", tenant_id="t1")
    assert info.value.subtype == why


def test_sensitive_names_are_never_selected() -> None:
    plan = Plan(
        query_type=QueryType.STATUS,
        entity_type="config",
        projection=("id", "key", "secret_value", "value"),
    )
    for dialect in ("sqlite", "postgresql"):
        for st in compile_plan(plan, CATALOG, dialect, tenant_id="t1").statements:
            assert "secret_value" not in st.sql


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_unused_fallback_slots_repeat_the_first_spelling(dialect: str) -> None:
    """A padded slot must find nothing the first slot does not (an empty substring
    would match every text: instr(x, '') is 1 on SQLite)."""
    plan = Plan(
        query_type=QueryType.EXISTENCE,
        entity_type="project",
        filters=(Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="美股"),),
        retrieval_policy=RetrievalPolicy(allow_fallback_text=True),
    )
    (run,) = prepare(plan, CATALOG, dialect, "t1", now=NOW).fallback_runs
    (terms,) = run.terms.values()
    assert len(terms) == 4
    slots = [
        (run.params[f"g0_s{j}_grams"], run.params[f"g0_s{j}_n"], run.params[f"g0_s{j}_text"])
        for j in range(8)
    ]
    assert all(s == slots[0] for s in slots[4:])
    assert all(text.strip("%") for _grams, _n, text in slots)
