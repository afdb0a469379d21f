"""Every measure of the aggregate kind against a Python oracle, on SQLite and PostgreSQL.

Two catalogs: the online shop's (tests/deployments/shop/: payments, NUMERIC
amounts, declared sums, averages, a count_distinct and a ratio) and a staff-like
one (an INTEGER bonus, a NUMERIC salary, a REAL rating, a ratio of two sums).
Each example draws the rows of two tenants (NULLs and empty sets included),
writes them into a table built here, and asks every function and declared
measure under a filter or none; the oracle computes the same from the rows
it wrote: NULLs are no values, another tenant's rows never count, an empty
set has no value (a count is 0), a ratio with a zero or missing denominator
has none.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.shop import SHOP_CATALOG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog, catalog_from_mapping, load_catalog
from qdsl.dsl.ir import Aggregation, Measure, Plan, QueryType
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.dsl.plan.printer import measure_text
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure
from qdsl.render import render

TENANTS = ("t1", "t2")


def _staff() -> Catalog:
    number = {"type": "number", "operators": ["gt", "lt", "is_null"]}
    return catalog_from_mapping(
        {
            "facts": {"table": "semantic_facts"},
            "entities": {
                "worker": {
                    "table": "workers",
                    "id": "id",
                    "tenant": "tenant_id",
                    "label": "name",
                    "default_projection": ["id", "name", "grade"],
                    "query_types": ["count", "list", "aggregate"],
                    "fields": {
                        "grade": {
                            "column": "grade",
                            "type": "enum",
                            "values": ["a", "b"],
                            "operators": ["equals"],
                            "aggregations": ["count_distinct"],
                        },
                        "salary": {
                            **number,
                            "column": "salary",
                            "aggregations": ["sum", "avg", "min", "max"],
                        },
                        "bonus": {
                            **number,
                            "column": "bonus",
                            "aggregations": ["sum", "avg", "min", "max", "count_distinct"],
                        },
                        "rating": {**number, "column": "rating", "aggregations": ["avg", "max"]},
                    },
                    "measures": {
                        "payroll": {"function": "sum", "field": "salary"},
                        "bonuses": {"function": "sum", "field": "bonus"},
                        "bonus_rate": {"numerator": "bonuses", "denominator": "payroll"},
                    },
                }
            },
        }
    )


# entity -> (table, {field: (column, DDL per dialect, strategy of values)}, filter field)
_MONEY = st.none() | st.decimals(
    min_value=Decimal("-500"), max_value=Decimal("5000"), places=2, allow_nan=False
)
_SHAPES: dict[str, tuple[str, str, dict[str, tuple[str, st.SearchStrategy[Any]]]]] = {
    "payment": (
        "payments",
        "method",
        {
            "order_id": ("INTEGER", st.none() | st.integers(1, 4)),
            "amount": ("NUMERIC(10, 2)", _MONEY),
            "method": ("VARCHAR(16)", st.sampled_from(["card", "paypal", "transfer"])),
        },
    ),
    "worker": (
        "workers",
        "grade",
        {
            "grade": ("VARCHAR(8)", st.none() | st.sampled_from(["a", "b"])),
            "salary": ("NUMERIC(12, 2)", _MONEY),
            "bonus": ("INTEGER", st.none() | st.integers(-50, 900)),
            "rating": ("REAL", st.none() | st.sampled_from([0.5, 1.25, 3.0, 4.75])),
        },
    ),
}
_CATALOGS: dict[str, Callable[[], Catalog]] = {
    "payment": lambda: load_catalog(SHOP_CATALOG),
    "worker": _staff,
}


# columns the catalog names that every row holds alike (label first)
_FIXED: dict[str, dict[str, tuple[str, Any]]] = {
    "payment": {
        "reference": ("VARCHAR(32)", None),
        "paid_at": ("TIMESTAMP", datetime(2026, 5, 1, 12, 0)),
        "refunded": ("BOOLEAN", False),
    },
    "worker": {"name": ("VARCHAR(32)", None)},
}


def _ddl(entity: str, dialect: str) -> str:
    table, _, cols = _SHAPES[entity]
    real = "DOUBLE PRECISION" if dialect == "postgresql" else "REAL"
    types = {c: t for c, (t, _) in {**cols, **_FIXED[entity]}.items()}
    body = ", ".join(f"{c} {real if t == 'REAL' else t}" for c, t in types.items())
    return (
        f"CREATE TABLE {table} (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, "
        f"{body}, PRIMARY KEY (tenant_id, id))"
    )


def _alone(entity: str, catalog: Catalog) -> Catalog:
    """The catalog with only this entity (the others' tables are not built here),
    answering aggregates."""
    ent = catalog.entities[entity]
    kinds = tuple(dict.fromkeys((*ent.query_types, QueryType.AGGREGATE)))
    ent = ent.model_copy(update={"relations": {}, "query_types": kinds})
    return catalog.model_copy(update={"entities": {entity: ent}})


@pytest.fixture(scope="module")
def databases(request: pytest.FixtureRequest) -> Iterator[Callable[[str, str], Any]]:
    """(entity, dialect) -> (engine, catalog): built once per module."""
    made: dict[tuple[str, str], Any] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def get(entity: str, dialect: str) -> Any:
            key = (entity, dialect)
            if key not in made:
                if dialect == "sqlite":
                    url = f"sqlite+pysqlite:///{Path(tmp) / f'{entity}.sqlite3'}"
                else:
                    url = request.getfixturevalue("pg_database_factory")()
                catalog = _alone(entity, _CATALOGS[entity]())
                engine = make_engine(url)
                with engine.begin() as conn:
                    conn.exec_driver_sql(_ddl(entity, dialect))
                upgrade(url)
                if dialect == "postgresql":
                    secure(engine, catalog, reader=READER_ROLE, apply=True)
                made[key] = (engine, catalog)
            return made[key]

        yield get
        for engine, _ in made.values():
            engine.dispose()


def _rows(entity: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    cols = _SHAPES[entity][2]
    row = st.fixed_dictionaries(
        {"tenant_id": st.sampled_from(TENANTS), **{c: s for c, (_, s) in cols.items()}}
    )
    return st.lists(row, max_size=12)


def _write(engine: sa.Engine, entity: str, rows: list[dict[str, Any]]) -> None:
    table_name, _, cols = _SHAPES[entity]
    fixed = _FIXED[entity]
    names = ("tenant_id", "id", *cols, *fixed)
    table = sa.table(table_name, *(sa.column(n) for n in names))
    label = next(iter(fixed))
    sqlite = engine.dialect.name == "sqlite"
    written = [
        {
            **{k: str(v) if sqlite and isinstance(v, Decimal) else v for k, v in r.items()},
            **{k: v for k, (_, v) in fixed.items()},
            "id": i + 1,
            label: f"r{i + 1}",
        }
        for i, r in enumerate(rows)
    ]
    with engine.begin() as conn:
        conn.execute(sa.delete(table))
        if written:
            conn.execute(sa.insert(table), written)


def _fn(function: str, values: list[float]) -> float | None:
    if not values:
        return None
    table: dict[str, Callable[[list[float]], float]] = {
        "sum": math.fsum,
        "avg": lambda v: math.fsum(v) / len(v),
        "min": min,
        "max": max,
    }
    return table[function](values)


def oracle(
    catalog: Catalog, entity: str, measure: Measure, rows: list[dict[str, Any]]
) -> tuple[float | int | None, int]:
    """(value, how many rows or values it was computed from), from the rows alone."""
    ent = catalog.entities[entity]
    if measure.name is not None:
        m = ent.measures[measure.name]
        if m.is_ratio:
            assert m.numerator is not None and m.denominator is not None
            num, _ = oracle(catalog, entity, _as_measure(ent.measures[m.numerator]), rows)
            den, _ = oracle(catalog, entity, _as_measure(ent.measures[m.denominator]), rows)
            value = None if num is None or den is None or den == 0 else num / den
            return value, len(rows)
        measure = _as_measure(m)
    if measure.field is None:
        return len(rows), len(rows)
    column = ent.fields[measure.field].column or measure.field
    present = [r[column] for r in rows if r[column] is not None]
    assert measure.function is not None
    if measure.function is Aggregation.COUNT_DISTINCT:
        return len(set(present)), len(present)
    return _fn(measure.function.value, [float(v) for v in present]), len(present)


def _as_measure(m: Any) -> Measure:
    return Measure(function=m.function, field=m.field)


def _measures(catalog: Catalog, entity: str) -> list[Measure]:
    ent = catalog.entities[entity]
    out = [Measure(function=Aggregation.COUNT)]
    for name, f in ent.fields.items():
        out.extend(Measure(function=fn, field=name) for fn in f.aggregations)
    out.extend(Measure(name=name) for name, m in ent.measures.items() if m.function != "count")
    return out


def _close(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is want
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-6)


def _plan(catalog: Catalog, entity: str, measure: Measure, value: str | None) -> Plan:
    where = "" if value is None else f' where {_SHAPES[entity][1]} = "{value}"'
    source = f"aggregate {entity}{where} measure {measure_text(measure)} limit 500"
    return compile_source(source, catalog, None).plan


_DIALECTS = [pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)]


@pytest.mark.parametrize("dialect", _DIALECTS)
@pytest.mark.parametrize("entity", sorted(_SHAPES))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_measure_agrees_with_the_oracle(
    databases: Callable[[str, str], Any], entity: str, dialect: str, data: st.DataObject
) -> None:
    engine, catalog = databases(entity, dialect)
    rows = data.draw(_rows(entity), label="rows")
    _write(engine, entity, rows)
    field = _SHAPES[entity][1]
    choices = sorted({str(r[field]) for r in rows if r[field] is not None} | {"a", "card"})
    value = data.draw(st.none() | st.sampled_from(choices), label="filter")
    for measure in _measures(catalog, entity):
        raw = _plan(catalog, entity, measure, value if value in _values(catalog, entity) else None)
        for tenant in TENANTS:
            mine = [r for r in rows if r["tenant_id"] == tenant]
            if raw.filters:
                mine = [r for r in mine if r[field] == raw.filters[0].value]
            result = execute(raw, catalog, engine, tenant)
            want, basis = oracle(catalog, entity, measure, mine)
            got = result.data
            assert _close(got["value"], want), (measure, tenant, got, want, mine)
            assert got["values"] == basis, (measure, got, basis)
            assert len(got["rows"]) == min(basis, 500)
            assert all(r.tenant_id == tenant for r in result.rows)


def _values(catalog: Catalog, entity: str) -> tuple[str, ...]:
    return catalog.entities[entity].fields[_SHAPES[entity][1]].values


def test_the_oracle_is_not_the_product() -> None:
    """The oracle computes from rows it is handed; a hand-worked example pins it."""
    catalog = _staff()
    rows = [
        {"salary": Decimal("100.00"), "bonus": 10, "rating": None, "grade": "a"},
        {"salary": Decimal("300.00"), "bonus": None, "rating": 3.0, "grade": "a"},
        {"salary": None, "bonus": 20, "rating": 1.0, "grade": None},
    ]
    avg = Measure(function=Aggregation.AVG, field="salary")
    assert oracle(catalog, "worker", avg, rows) == (200.0, 2)
    assert oracle(catalog, "worker", Measure(name="bonus_rate"), rows) == (0.075, 3)
    assert oracle(catalog, "worker", Measure(function=Aggregation.COUNT), []) == (0, 0)
    assert oracle(catalog, "worker", Measure(name="payroll"), []) == (None, 0)
    distinct = Measure(function=Aggregation.COUNT_DISTINCT, field="grade")
    assert oracle(catalog, "worker", distinct, rows) == (1, 2)


@pytest.mark.parametrize("dialect", _DIALECTS)
def test_the_answer_states_the_function_and_its_basis(
    databases: Callable[[str, str], Any], dialect: str
) -> None:
    engine, catalog = databases("worker", dialect)
    rows = [
        {"tenant_id": "t1", "grade": "a", "salary": Decimal("100.00"), "bonus": 10, "rating": 1.0},
        {"tenant_id": "t1", "grade": "b", "salary": Decimal("200.00"), "bonus": 0, "rating": 3.0},
        {"tenant_id": "t1", "grade": "a", "salary": None, "bonus": None, "rating": None},
        {"tenant_id": "t2", "grade": "b", "salary": Decimal("900.00"), "bonus": 5, "rating": 2.0},
    ]
    _write(engine, "worker", rows)
    said = {
        "avg(salary)": ("的平均salary 150（共 2 条）", "Average salary of workers: 150 (over 2)"),
        "count()": ("的数量 3（共 3 条）", "Number of workers: 3 (over 3)"),
        "count_distinct(grade)": ("的不同grade数 2（共 3 条）", "distinct grade values of"),
        "bonus_rate": ("的bonus rate 0.03333（共 3 条）", "bonus rate of workers: 0.03333"),
        "max(rating)": ("的最高rating 3（共 2 条）", "Maximum rating of workers: 3 (over 2)"),
    }
    for measure, (zh, en) in said.items():
        plan = compile_source(f"aggregate worker measure {measure}", catalog, None).plan
        result = execute(plan, catalog, engine, "t1")
        assert result.data["function"] == (
            "ratio" if measure == "bonus_rate" else measure.split("(")[0]
        )
        for language, words in (("zh", zh), ("en", en)):
            text = render(plan, result, language=language, catalog=catalog).text
            assert words in text, (measure, text)
    _write(engine, "worker", [])
    plan = compile_source("aggregate worker measure bonus_rate", catalog, None).plan
    text = render(plan, execute(plan, catalog, engine, "t1"), language="en", catalog=catalog).text
    assert "cannot be computed" in text, text
