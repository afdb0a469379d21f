"""Breakdowns grouped across declared many-to-one relations, against Python oracles, on
SQLite and PostgreSQL (the reader role, row-level security), over two catalogs.

A library (books → authors, written here: an INTEGER page count, a TEXT country, a
DATE birthday, ids unique per tenant only) with rows Hypothesis writes: a book's
author id may name no author of its tenant but one of the other tenant, which must
put the book in the NULL group, never under the other tenant's author. And the
online shop (tests/deployments/shop/): payments by their order's customer's tier,
two relations away. The oracles group in Python: a related object by its id (shown
by its label), a related field by its value, a related date by its year.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import QdslError
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure

TENANTS = ("t1", "t2")

LIBRARY: Catalog = catalog_from_mapping(
    {
        "entities": {
            "author": {
                "table": "lib_authors",
                "id": "id",
                "tenant": "tenant_id",
                "label": "name",
                "query_types": ["count", "list", "breakdown"],
                "synonyms": ["author", "authors", "作者"],
                "fields": {
                    "country": {"column": "country", "type": "text", "synonyms": ["country"]},
                    "born": {
                        "column": "born",
                        "type": "date",
                        "grains": ["year"],
                        "synonyms": ["born"],
                    },
                    "secret": {"column": "secret", "type": "text", "sensitive": True},
                },
            },
            "book": {
                "table": "lib_books",
                "id": "id",
                "tenant": "tenant_id",
                "label": "title",
                "query_types": ["count", "list", "breakdown", "aggregate"],
                "synonyms": ["book", "books", "书"],
                "fields": {
                    "author_id": {"column": "author_id", "type": "id", "references": "author"},
                    "pages": {
                        "column": "pages",
                        "type": "number",
                        "aggregations": ["sum", "avg", "max"],
                        "synonyms": ["pages"],
                    },
                },
                "relations": {
                    "writer": {
                        "entity": "author",
                        "key": "author_id",
                        "synonyms": ["author", "作者"],
                        "inverse": "books",
                    }
                },
            },
        }
    }
)

_DDL = (
    "CREATE TABLE lib_authors (tenant_id TEXT NOT NULL, id INTEGER NOT NULL, name TEXT, "
    "country TEXT, born DATE, secret TEXT, PRIMARY KEY (tenant_id, id))",
    "CREATE TABLE lib_books (tenant_id TEXT NOT NULL, id INTEGER NOT NULL, title TEXT, "
    "author_id INTEGER, pages INTEGER, PRIMARY KEY (tenant_id, id))",
)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def library(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('lib') / 'lib.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    upgrade(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        for ddl in _DDL:
            conn.exec_driver_sql(ddl)
    if engine.dialect.name == "postgresql":
        secure(engine, LIBRARY, reader=READER_ROLE, apply=True)
    yield engine
    engine.dispose()


authors = st.lists(
    st.fixed_dictionaries(
        {
            "tenant_id": st.sampled_from(TENANTS),
            "id": st.integers(1, 4),
            "name": st.sampled_from(["Ann", "Bo", "Ann", None]),  # a label two share
            "country": st.one_of(st.none(), st.sampled_from(["DE", "de", "中国"])),
            "born": st.one_of(
                st.none(), st.integers(-800, 800).map(lambda d: date(1970, 1, 1) + timedelta(d))
            ),
            "secret": st.just("x"),
        }
    ),
    max_size=8,
    unique_by=lambda a: (a["tenant_id"], a["id"]),
)
books = st.lists(
    st.fixed_dictionaries(
        {
            "tenant_id": st.sampled_from(TENANTS),
            "author_id": st.one_of(st.none(), st.integers(1, 5)),
            "pages": st.one_of(st.none(), st.integers(0, 500)),
        }
    ),
    max_size=25,
)


def _load(engine: sa.Engine, who: list[dict[str, Any]], what: list[dict[str, Any]]) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM lib_books"))
        conn.execute(sa.text("DELETE FROM lib_authors"))
        if who:
            conn.execute(
                sa.text(
                    "INSERT INTO lib_authors VALUES "
                    "(:tenant_id, :id, :name, :country, :born, :secret)"
                ),
                who,
            )
        if what:
            conn.execute(
                sa.text(
                    "INSERT INTO lib_books VALUES (:tenant_id, :id, :title, :author_id, :pages)"
                ),
                [dict(b, id=i, title=f"book {i}") for i, b in enumerate(what)],
            )


def _author_key(a: dict[str, Any] | None, how: str) -> Any:
    if a is None:
        return None
    if how == "object":
        return str(a["id"])
    if how == "year":
        return None if a["born"] is None else str(a["born"].year)
    return a["country"]


def _oracle(
    who: list[dict[str, Any]], what: list[dict[str, Any]], tenant: str, how: str, summed: bool
) -> dict[Any, Any]:
    mine = {a["id"]: a for a in who if a["tenant_id"] == tenant}
    groups: dict[Any, list[int | None]] = defaultdict(list)
    for b in what:
        if b["tenant_id"] == tenant:
            groups[_author_key(mine.get(b["author_id"]), how)].append(b["pages"])
    if not summed:
        return {k: len(v) for k, v in groups.items()}
    out: dict[Any, Any] = {}
    for k, v in groups.items():
        values = [p for p in v if p is not None]
        out[k] = sum(values) if values else None
    return out


_PLANS = [
    ("writer", "object"),
    ("author", "object"),  # the relation's synonym
    ("writer.country", "country"),
    ("writer.born year", "year"),
]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(who=authors, what=books)
def test_groups_across_a_relation_agree_with_the_oracle(
    library: sa.Engine, who: list[dict[str, Any]], what: list[dict[str, Any]]
) -> None:
    _load(library, who, what)
    for by, how in _PLANS:
        for summed in (False, True):
            measure = " measure sum(pages)" if summed else ""
            plan = compile_source(f"breakdown book{measure} group by {by}", LIBRARY, None).plan
            for tenant in TENANTS:
                result = execute(plan, LIBRARY, library, tenant)
                got = {g["keys"][0]: g["value"] for g in result.data["groups"]}
                assert got == _oracle(who, what, tenant, how, summed), (by, summed, tenant)
                assert all(r.tenant_id == tenant for r in result.rows)
                if how == "object":
                    names = {str(a["id"]): a["name"] for a in who if a["tenant_id"] == tenant}
                    for g in result.data["groups"]:
                        key = g["keys"][0]
                        assert g["labels"] == [None if key is None else names[key]]


def test_a_grouping_is_bound_to_the_relations_names() -> None:
    plan = compile_source("breakdown book group by 作者.country", LIBRARY, None).plan
    assert [g.field for g in plan.group_by] == ["writer.country"]


@pytest.mark.parametrize(
    ("by", "subtype"),
    [
        ("writer.secret", "grouping_not_allowed"),  # sensitive: as on the entity itself
        ("writer.nothing", "grouping_not_allowed"),
        ("writer.born month", "grain_not_allowed"),  # the catalog lists year only
        ("writer month", "grain_not_allowed"),  # an object has no period
        ("publisher.country", "grouping_not_allowed"),  # no such relation
    ],
)
def test_a_grouping_no_relation_allows_is_refused(by: str, subtype: str) -> None:
    with pytest.raises(QdslError) as caught:
        compile_source(f"breakdown book group by {by}", LIBRARY, None)
    assert caught.value.subtype == subtype, caught.value


def test_a_one_to_many_relation_does_not_group() -> None:
    with pytest.raises(QdslError) as caught:
        compile_source("breakdown author group by books", LIBRARY, None)
    assert caught.value.subtype == "relation_many_values"


@pytest.fixture
def shop_engine(shop_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(shop_url)
    yield engine
    engine.dispose()


def test_payments_by_their_customers_tier_two_relations_away(
    shop_engine: sa.Engine, shop_catalog: Catalog
) -> None:
    with shop_engine.connect() as conn:
        tables = {
            t: [dict(r) for r in conn.execute(sa.text(f"SELECT * FROM {t}")).mappings()]
            for t in ("customers", "orders", "payments")
        }
    for tenant in ("nordwind", "sunrise"):
        customers = {c["id"]: c for c in tables["customers"] if c["tenant_id"] == tenant}
        orders = {o["id"]: o for o in tables["orders"] if o["tenant_id"] == tenant}
        want: dict[Any, float] = defaultdict(float)
        for p in tables["payments"]:
            if p["tenant_id"] == tenant:
                order = orders.get(p["order_id"])
                customer = customers.get(order["customer_id"]) if order else None
                want[customer["tier"] if customer else None] += float(p["amount"])
        plan = compile_source(
            "breakdown payment measure sum(amount) group by order.customer.tier",
            shop_catalog,
            None,
        ).plan
        result = execute(plan, shop_catalog, shop_engine, tenant)
        got = {g["keys"][0]: g["value"] for g in result.data["groups"]}
        assert got == pytest.approx(dict(want)), tenant
