"""The breakdown tests' deployment: one table of many column types, two catalogs over it.

Two hand-written catalogs of other domains (a shop's orders in Asia/Shanghai,
a staff list in America/New_York) read one table of TEXT, INTEGER, BOOLEAN,
DATE, TIMESTAMP and TIMESTAMPTZ columns (text on SQLite, written with offsets),
on SQLite and PostgreSQL (the reader role, row-level security).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import strategies as st
from sqlalchemy import Engine, text

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.grain import Grain
from qdsl.dsl.kinds.breakdown import period_key
from qdsl.executor.grains import truncate
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure

TABLE = "bd_rows"
TENANTS = ("t1", "t2")
# (column, SQL type on PostgreSQL, on SQLite)
COLUMNS = (
    ("kind", "TEXT", "TEXT"),
    ("city", "TEXT", "TEXT"),
    ("flag", "BOOLEAN", "BOOLEAN"),
    ("n", "INTEGER", "INTEGER"),
    ("day", "DATE", "DATE"),
    ("at_ts", "TIMESTAMP", "TIMESTAMP"),
    ("at_tz", "TIMESTAMPTZ", "TEXT"),
    ("secret", "TEXT", "TEXT"),
)


def _catalog(
    entity: str,
    zone: str,
    names: dict[str, tuple[str, str]],
    grains: dict[str, list[str]],
    zh: str,
) -> Catalog:
    """One entity over TABLE; `names` maps each column to the field name it has here
    and its Chinese name, `grains` each time column to its grains."""
    types = {
        "kind": "enum",
        "city": "text",
        "flag": "bool",
        "n": "number",
        "day": "date",
        "at_ts": "datetime",
        "at_tz": "datetime",
        "secret": "text",
    }
    fields: dict[str, Any] = {}
    for column, kind in types.items():
        name, zh_name = names[column]
        spec: dict[str, Any] = {"column": column, "type": kind, "synonyms": [name, zh_name]}
        if kind == "enum":
            spec["values"] = ["a", "b", "c"]
            spec["aliases"] = {"a": ["a", "甲"], "b": ["b", "乙"], "c": ["c", "丙"]}
        if kind in ("date", "datetime"):
            spec["grains"] = grains[column]
        if kind in ("date", "datetime", "number"):
            spec["operators"] = ["equals", "gt", "gte", "lt", "lte", "between"]
        if kind == "number":
            spec["aggregations"] = ["sum", "avg", "min", "max", "count_distinct"]
        if column == "secret":
            spec["sensitive"] = True
        fields[name] = spec
    number = names["n"][0]
    # a sum, a row count and their ratio, declared (named after the number field)
    measures = {
        f"{number}_total": {"field": number, "function": "sum"},
        f"{entity}_rows": {"function": "count"},
        f"{number}_per_{entity}": {"numerator": f"{number}_total", "denominator": f"{entity}_rows"},
    }
    fields["score"] = {"fact": "score", "type": "number"}
    return catalog_from_mapping(
        {
            "timezone": zone,
            "entities": {
                entity: {
                    "table": TABLE,
                    "id": "id",
                    "tenant": "tenant_id",
                    "label": "label",
                    "query_types": ["count", "list", "breakdown"],
                    "measures": measures,
                    "synonyms": [entity, f"{entity}s", zh],
                    "fields": fields,
                }
            },
        }
    )


SHOP = _catalog(
    "order",
    "Asia/Shanghai",
    {
        "kind": ("channel", "渠道"),
        "city": ("city", "城市"),
        "flag": ("paid", "已付款"),
        "n": ("items", "件数"),
        "day": ("placed_on", "下单日期"),
        "at_ts": ("shipped_at", "发货时间"),
        "at_tz": ("delivered_at", "送达时间"),
        "secret": ("card", "卡号"),
    },
    {"day": ["day", "week"], "at_ts": ["month", "quarter"], "at_tz": ["day", "year"]},
    "订单",
)
STAFF = _catalog(
    "employee",
    "America/New_York",
    {
        "kind": ("grade", "职级"),
        "city": ("office", "办公室"),
        "flag": ("remote", "远程"),
        "n": ("level", "级别"),
        "day": ("hired_on", "入职日期"),
        "at_ts": ("badge_at", "打卡时间"),
        "at_tz": ("review_at", "评审时间"),
        "secret": ("ssn", "证件号"),
    },
    {"day": ["month"], "at_ts": ["quarter", "week"], "at_tz": ["year", "day"]},
    "员工",
)


def create(url: str) -> None:
    upgrade(url)
    engine = make_engine(url)
    pg = engine.dialect.name == "postgresql"
    cols = ", ".join(f"{c} {pgt if pg else lite}" for c, pgt, lite in COLUMNS)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {TABLE}")
        conn.exec_driver_sql(
            f"CREATE TABLE {TABLE} (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
            f"label TEXT, {cols}, PRIMARY KEY (tenant_id, id))"
        )
    if pg:
        # the executor reads as the reader role, under row-level security
        for catalog in (SHOP, STAFF):
            secure(engine, catalog, reader=READER_ROLE, apply=True)
    engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def bd_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('bd') / 'bd.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    create(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def stored(row: dict[str, Any], i: int, dialect: str) -> dict[str, Any]:
    out = dict(row, id=f"i-{i:04d}", label=f"row {i}")
    if row["at_ts"] is not None:
        out["at_ts"] = row["at_ts"].replace(tzinfo=None)  # naive: UTC
    if row["at_tz"] is not None and dialect == "sqlite":
        # text with an offset, as another tool would write it
        out["at_tz"] = row["at_tz"].astimezone(ZoneInfo("Asia/Kolkata")).isoformat()
    if row["day"] is not None and dialect == "sqlite":
        out["day"] = row["day"].isoformat()
    if row["at_ts"] is not None and dialect == "sqlite":
        out["at_ts"] = out["at_ts"].strftime("%Y-%m-%d %H:%M:%S.%f")
    return out


def load(engine: Engine, data: list[dict[str, Any]]) -> None:
    names = ["tenant_id", "id", "label", *(c for c, _, _ in COLUMNS)]
    with engine.begin() as conn:
        conn.execute(text(f"DELETE FROM {TABLE}"))
        if data:
            stmt = text(
                f"INSERT INTO {TABLE} ({', '.join(names)}) "
                f"VALUES ({', '.join(':' + n for n in names)})"
            )
            conn.execute(stmt, [stored(r, i, engine.dialect.name) for i, r in enumerate(data)])


# the rows Hypothesis writes: two tenants, NULLs, instants near the turn of a month and
# a year (so the catalog's zone moves them)
_EDGE = datetime(2024, 12, 31, 12, 0, tzinfo=UTC)
instants = st.one_of(
    st.none(),
    st.integers(min_value=-40 * 24, max_value=40 * 24).map(lambda h: _EDGE + timedelta(hours=h)),
)
rows = st.lists(
    st.fixed_dictionaries(
        {
            "tenant_id": st.sampled_from(TENANTS),
            "kind": st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
            "city": st.one_of(st.none(), st.sampled_from(["Ürümqi", "berlin", "Berlin", "上海"])),
            "flag": st.one_of(st.none(), st.booleans()),
            "n": st.one_of(st.none(), st.integers(min_value=-2, max_value=3)),
            "day": st.one_of(
                st.none(),
                st.integers(min_value=-50, max_value=50).map(
                    lambda d: date(2025, 1, 1) + timedelta(days=d)
                ),
            ),
            "at_ts": instants,
            "at_tz": instants,
            "secret": st.just("x"),
        }
    ),
    max_size=30,
)


def oracle_key(row: dict[str, Any], column: str, grain: Grain | None, zone: str) -> Any:
    value = row[column]
    if value is None:
        return None
    if column in ("at_ts", "at_tz"):
        day = value.astimezone(ZoneInfo(zone)).date()
        return period_key(truncate(day, grain), grain)
    if column == "day":
        return period_key(truncate(value, grain), grain)
    return value


def key_order(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((k is None, k if k is not None else 0) for k in key)
