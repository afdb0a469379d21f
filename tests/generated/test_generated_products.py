"""Declared product measures on the generated type matrix, every run: each deployment
stores its number fields in the k-th column type the dialect allows (INTEGER,
BIGINT, NUMERIC, REAL, DOUBLE PRECISION; a NULL every fourth row), and its catalog
declares salary × premium and salary × salary (past INTEGER's range: 60000²) as a
sum, an average, a minimum and a maximum. Each is computed as an aggregate and per
value of an enum field, and checked against the rows multiplied here with
measures_judge.py's arithmetic. The drawn questions do not ask these measures (no
words of the vocabulary name a product): this module adds them to the catalog
itself and plans by hand.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

import pytest
from generated.database import Builder
from generated.deployments import matrix, matrix_size
from generated.measures_judge import measure_of, near
from generated.model import TENANTS, Deployment, Dialect, Entity, catalog_mapping
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute

FUNCTIONS = ("sum", "avg", "min", "max")
# measure name -> (field, times)
PRODUCTS = {"salary_premium": ("salary", "premium"), "salary_squared": ("salary", "salary")}


def _params() -> list[Any]:
    out = []
    for dialect in ("sqlite", "postgresql"):
        marks = [pytest.mark.pg] if dialect == "postgresql" else []
        for k in range(matrix_size(dialect, frozenset())):
            out.append(pytest.param(dialect, k, marks=marks, id=f"{dialect}-{k}"))
    return out


def _catalog(dep: Deployment) -> Catalog:
    raw = catalog_mapping(dep)
    for ent in dep.entities:
        raw["entities"][ent.name]["measures"] = {
            f"{name}_{fn}": {"field": a, "times": b, "function": fn}
            for name, (a, b) in PRODUCTS.items()
            for fn in FUNCTIONS
        }
    return catalog_from_mapping(raw, source="<generated products>")


def _products(rows: Any, a: str, b: str, key: str) -> list[tuple[Any, Decimal]]:
    """(the row's `key`, a × b) of every row holding both factors."""
    return [
        (r[key], Decimal(r[a]) * Decimal(r[b]))
        for r in rows
        if r[a] is not None and r[b] is not None
    ]


def _run(catalog: Catalog, engine: Engine, tenant: str, source: str) -> Any:
    return execute(compile_source(source, catalog, None).plan, catalog, engine, tenant)


def _check(dep: Deployment, catalog: Catalog, engine: Engine, ent: Entity) -> int:
    enum = next(f.name for f in ent.fields if f.kind == "enum")
    checked = 0
    for tenant in TENANTS:
        for name, (a, b) in PRODUCTS.items():
            products = _products(dep.rows_of(tenant, ent.name), a, b, enum)
            for fn in FUNCTIONS:
                measure = f"{name}_{fn}"
                data = _run(catalog, engine, tenant, f"aggregate {ent.name} measure {measure}")
                want = measure_of(fn, [p for _, p in products])
                where = (dep.dialect, tenant, measure, [f.sql for f in ent.fields])
                assert near(data.data["value"], want), (*where, data.data["value"], want)
                assert data.data["values"] == len(products), where
                source = f"breakdown {ent.name} measure {measure} group by {enum}"
                grouped = _run(catalog, engine, tenant, source)
                per: dict[Any, list[Decimal]] = defaultdict(list)
                for key, p in products:
                    per[key].append(p)
                found = {g["keys"][0]: g["value"] for g in grouped.data["groups"]}
                assert set(per) <= set(found), (*where, found, per)
                for key, values in per.items():
                    assert near(found[key], measure_of(fn, values)), (*where, key, found, values)
                checked += 1
    return checked


@pytest.mark.parametrize(("dialect", "k"), _params())
def test_a_product_of_two_number_columns_agrees_with_the_rows(
    dialect: Dialect, k: int, request: pytest.FixtureRequest
) -> None:
    dep = matrix(dialect, k, frozenset())
    ent = dep.entities[0]
    assert {"salary", "premium"} <= {f.name for f in ent.fields if f.kind == "number"}
    build: Builder = request.getfixturevalue(
        f"{'sqlite' if dialect == 'sqlite' else 'pg'}_deployments"
    )
    catalog = _catalog(dep)
    with build(dep) as engine:
        checked = sum(_check(dep, catalog, engine, e) for e in dep.entities)
    assert checked == len(dep.entities) * len(TENANTS) * len(PRODUCTS) * len(FUNCTIONS)
