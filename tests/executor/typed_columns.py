"""A deployment with a column of every SQL type, for the field type × column type matrix.

One table, `things` (id INTEGER: ids sort as numbers, not as text), holds one
column per stored type of each dialect, each with values for two tenants that
share ids (3, 20, 100) and differ in values; tenant t1 also has a row (7) whose
columns are all NULL. A cell of the matrix is a catalog whose entity `thing`
declares one field `f` of one field type on one column (`cell_catalog`): the
same database serves every cell. `meaning` is the test's own reading of a
stored value as a field type (the oracle), written apart from the product's.

Import as `from typed_columns import ...` (pytest puts tests/executor on the path).
"""

from __future__ import annotations

import json
import tomllib
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure

TENANTS = ("t1", "t2")
IDS = ("3", "20", "100")  # t1 and t2 alike; t1 also has "7", all NULL
NULL_ID = "7"
KINDS = ("text", "enum", "id", "number", "date", "datetime", "bool")
_PLUS8 = timezone(timedelta(hours=8))


@dataclass(frozen=True)
class Col:
    """A column: its DDL type per dialect and its values (t1 then t2, in IDS order)."""

    name: str
    ddl: dict[str, str]
    t1: tuple[Any, Any, Any]
    t2: tuple[Any, Any, Any]
    # how SQLite is given the values, where it keeps them otherwise than as given
    sqlite: tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]] | None = None


def _iso(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v.isoformat() for v in values)


def _sqlite_time(values: tuple[datetime, ...]) -> tuple[str, ...]:
    return tuple(v.strftime("%Y-%m-%d %H:%M:%S") for v in values)


_D = (date(2025, 3, 1), date(2024, 12, 31), date(2025, 7, 15))
_D2 = (date(2025, 7, 15), date(2025, 3, 1), date(2023, 1, 2))
_T = (datetime(2025, 3, 1, 10, 0), datetime(2024, 12, 31, 23, 30), datetime(2025, 7, 15, 0, 0))
_T2 = (datetime(2025, 7, 15, 0, 0), datetime(2025, 3, 1, 10, 0), datetime(2023, 1, 2, 8, 0))
# 10:00 at +08:00 is 02:00 UTC; 07:30 at +08:00 on Jan 1 is Dec 31 UTC
_TZ = (
    datetime(2025, 3, 1, 10, 0, tzinfo=_PLUS8),
    datetime(2025, 1, 1, 7, 30, tzinfo=_PLUS8),
    datetime(2025, 7, 15, 0, 0, tzinfo=UTC),
)
_TZ2 = (_TZ[2], _TZ[0], datetime(2023, 1, 2, 8, 0, tzinfo=UTC))
_U = tuple(uuid.UUID(int=n * 7919 + 11) for n in (1, 2, 3))
_U2 = (_U[1], _U[2], _U[0])

COLUMNS: tuple[Col, ...] = (
    Col(
        "c_text",
        {"postgresql": "TEXT", "sqlite": "TEXT"},
        ("beta", "alpha", "gamma"),
        ("gamma", "beta", "alpha"),
    ),
    Col(
        "c_varchar",
        {"postgresql": "VARCHAR(40)", "sqlite": "VARCHAR(40)"},
        ("Nord", "east", "Süd"),
        ("east", "Süd", "Nord"),
    ),
    Col("c_enum", {"postgresql": "mood"}, ("busy", "away", "calm"), ("calm", "busy", "away")),
    Col("c_smallint", {"postgresql": "SMALLINT"}, (30, 10, 20), (10, 20, 30)),
    Col("c_integer", {"postgresql": "INTEGER", "sqlite": "INTEGER"}, (30, 10, 20), (10, 20, 30)),
    Col(
        "c_bigint",
        {"postgresql": "BIGINT", "sqlite": "BIGINT"},
        (9_000_000_000_000, 5, 77),
        (5, 77, 9_000_000_000_000),
    ),
    Col("c_int01", {"postgresql": "INTEGER", "sqlite": "INTEGER"}, (1, 0, 1), (0, 1, 0)),
    Col(
        "c_epoch",
        {"postgresql": "BIGINT", "sqlite": "INTEGER"},
        (1740823200, 1735689600, 1752537600),
        (1752537600, 1740823200, 1672531200),
    ),
    Col(
        "c_numeric",
        {"postgresql": "NUMERIC(10, 2)", "sqlite": "NUMERIC(10, 2)"},
        (Decimal("19.90"), Decimal("5.25"), Decimal("100.00")),
        (Decimal("5.25"), Decimal("100.00"), Decimal("0.10")),
        sqlite=((19.9, 5.25, 100), (5.25, 100, 0.1)),
    ),
    Col("c_real", {"postgresql": "REAL", "sqlite": "REAL"}, (0.1, 2.5, 7.75), (2.5, 7.75, 0.1)),
    Col(
        "c_double",
        {"postgresql": "DOUBLE PRECISION", "sqlite": "DOUBLE"},
        (0.3, 0.001, 12.5),
        (12.5, 0.3, 0.001),
    ),
    Col(
        "c_boolean",
        {"postgresql": "BOOLEAN", "sqlite": "BOOLEAN"},
        (True, False, True),
        (False, True, False),
        sqlite=((1, 0, 1), (0, 1, 0)),
    ),
    Col("c_date", {"postgresql": "DATE", "sqlite": "DATE"}, _D, _D2, sqlite=(_iso(_D), _iso(_D2))),  # type: ignore[arg-type]
    Col(
        "c_timestamp",
        {"postgresql": "TIMESTAMP", "sqlite": "TIMESTAMP"},
        _T,
        _T2,
        sqlite=(_sqlite_time(_T), _sqlite_time(_T2)),
    ),  # type: ignore[arg-type]
    Col(
        "c_timestamptz",
        {"postgresql": "TIMESTAMP WITH TIME ZONE", "sqlite": "TIMESTAMP WITH TIME ZONE"},
        _TZ,
        _TZ2,
        sqlite=(_iso(_TZ), _iso(_TZ2)),
    ),  # type: ignore[arg-type]
    Col("c_uuid", {"postgresql": "UUID"}, _U, _U2),  # type: ignore[arg-type]
    Col("c_text_date", {"postgresql": "TEXT", "sqlite": "TEXT"}, _iso(_D), _iso(_D2)),  # type: ignore[arg-type]
    Col(
        "c_text_time",
        {"sqlite": "TEXT"},
        ("2025-03-01T10:00:00Z", "2024-12-31T23:30:00Z", "2025-07-15T00:00:00+08:00"),
        ("2025-07-15T00:00:00+08:00", "2025-03-01T10:00:00Z", "2023-01-02T08:00:00Z"),
    ),
    Col(
        "c_json",
        {"postgresql": "JSONB"},
        ({"a": 1}, {"a": 2}, {"a": 3}),
        ({"a": 3}, {"a": 1}, {"a": 2}),
    ),
)


def columns(dialect: str) -> tuple[Col, ...]:
    return tuple(c for c in COLUMNS if dialect in c.ddl)


# What the executor serves, written out by hand (docs/catalog.md has the same table):
# field type -> dialect -> the columns of `COLUMNS` it is served on. Every other
# (field type, column) of a dialect must be refused by `qdsl catalog check`.
SERVED: dict[str, dict[str, frozenset[str]]] = {
    "text": {
        "postgresql": frozenset({"c_text", "c_varchar", "c_enum", "c_text_date"}),
        "sqlite": frozenset({"c_text", "c_varchar", "c_text_date", "c_text_time"}),
    },
    "enum": {
        "postgresql": frozenset({"c_text", "c_varchar", "c_enum", "c_text_date"}),
        "sqlite": frozenset({"c_text", "c_varchar", "c_text_date", "c_text_time"}),
    },
    "id": {
        "postgresql": frozenset(
            {
                "c_text",
                "c_varchar",
                "c_text_date",
                "c_smallint",
                "c_integer",
                "c_bigint",
                "c_int01",
                "c_epoch",
                "c_uuid",
            }
        ),
        "sqlite": frozenset(
            {
                "c_text",
                "c_varchar",
                "c_text_date",
                "c_text_time",
                "c_integer",
                "c_bigint",
                "c_int01",
                "c_epoch",
            }
        ),
    },
    "number": {
        "postgresql": frozenset(
            {
                "c_smallint",
                "c_integer",
                "c_bigint",
                "c_int01",
                "c_epoch",
                "c_numeric",
                "c_real",
                "c_double",
            }
        ),
        "sqlite": frozenset(
            {"c_integer", "c_bigint", "c_int01", "c_epoch", "c_numeric", "c_real", "c_double"}
        ),
    },
    "date": {
        "postgresql": frozenset({"c_date", "c_timestamp", "c_timestamptz"}),
        "sqlite": frozenset(
            {"c_date", "c_timestamp", "c_timestamptz", "c_text_date", "c_text_time"}
        ),
    },
    "datetime": {
        "postgresql": frozenset({"c_date", "c_timestamp", "c_timestamptz"}),
        "sqlite": frozenset(
            {"c_date", "c_timestamp", "c_timestamptz", "c_text_date", "c_text_time"}
        ),
    },
    "bool": {
        "postgresql": frozenset({"c_boolean", "c_int01"}),
        "sqlite": frozenset({"c_boolean", "c_int01"}),
    },
}


def by_name(name: str) -> Col:
    return next(c for c in COLUMNS if c.name == name)


def stored_values(col: Col, tenant: str) -> dict[str, Any]:
    """id -> the Python value given to the column (t1's NULL row included)."""
    values = col.t1 if tenant == "t1" else col.t2
    out: dict[str, Any] = dict(zip(IDS, values, strict=True))
    if tenant == "t1":
        out[NULL_ID] = None
    return out


def build(url: str, dialect: str) -> None:
    """The `things` table and its rows, qdsl's own tables; on PostgreSQL the reader's
    grants and row-level security (`qdsl db secure`) for the widest cell catalog."""
    cols = columns(dialect)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            if dialect == "postgresql":
                conn.exec_driver_sql("CREATE TYPE mood AS ENUM ('away', 'busy', 'calm')")
            ddl = ", ".join(f"{c.name} {c.ddl[dialect]}" for c in cols)
            conn.exec_driver_sql(
                "CREATE TABLE things (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, "
                f"name TEXT NOT NULL, {ddl}, PRIMARY KEY (tenant_id, id))"
            )
            table = sa.table(
                "things",
                *(sa.column(n) for n in ("tenant_id", "id", "name", *(c.name for c in cols))),
            )
            rows = []
            for tenant in TENANTS:
                ids = [*IDS, NULL_ID] if tenant == "t1" else list(IDS)
                for i, ident in enumerate(ids):
                    row: dict[str, Any] = {
                        "tenant_id": tenant,
                        "id": int(ident),
                        "name": f"{tenant} thing {ident}",
                    }
                    for c in cols:
                        row[c.name] = None if ident == NULL_ID else _given(c, tenant, i, dialect)
                    rows.append(row)
            conn.execute(sa.insert(table), rows)
        upgrade(url)
        if dialect == "postgresql":
            secure(
                engine,
                cell_catalog("text", "c_text", dialect, every_column=True),
                reader=READER_ROLE,
                apply=True,
            )
    finally:
        engine.dispose()


def _given(c: Col, tenant: str, i: int, dialect: str) -> Any:
    if dialect == "sqlite" and c.sqlite is not None:
        return (c.sqlite[0] if tenant == "t1" else c.sqlite[1])[i]
    value = (c.t1 if tenant == "t1" else c.t2)[i]
    if isinstance(value, dict):
        return json.dumps(value)
    if dialect == "sqlite" and isinstance(value, uuid.UUID):
        return str(value)
    return value


_OPERATORS = {
    "text": ["equals", "not_equals", "in", "not_in", "contains", "is_null"],
    "enum": ["equals", "not_equals", "in", "not_in", "is_null"],
    "id": ["equals", "not_equals", "in", "not_in", "is_null"],
    "number": ["equals", "not_equals", "in", "gt", "gte", "lt", "lte", "between", "is_null"],
    "date": ["equals", "not_equals", "in", "gt", "gte", "lt", "lte", "between", "is_null"],
    "datetime": ["equals", "not_equals", "gt", "gte", "lt", "lte", "between", "is_null"],
    "bool": ["equals", "not_equals", "is_null"],
}


def cell_catalog(
    kind: str,
    column: str,
    dialect: str,
    *,
    every_column: bool = False,
    text_search: tuple[str, ...] = (),
) -> Catalog:
    """The catalog of one cell: `thing` with field `f`, a `kind` on `column`
    (`every_column`: every column of the table projected, for `db secure`'s grants)."""
    col = by_name(column)
    lines = [
        "[entities.thing]",
        'table = "things"',
        'id = "id"',
        'tenant = "tenant_id"',
        'label = "name"',
        'query_types = ["existence", "count", "list", "status", "compare"]',
        'sorts = ["f"]',
        "default_limit = 20",
        f"text_search = {json.dumps(list(text_search))}",
        "max_limit = 50",
    ]
    projection = ["id", "name", "f"]
    if every_column:
        projection = ["id", "name", *(c.name for c in columns(dialect))]
    lines.append(f"default_projection = {json.dumps(projection)}")
    lines += [
        "",
        "[entities.thing.fields.f]",
        f'column = "{column}"',
        f'type = "{kind}"',
        f"operators = {json.dumps(_OPERATORS[kind])}",
    ]
    if kind == "enum":
        values = sorted({str(v) for v in (*col.t1, *col.t2)})
        lines.append(f"values = {json.dumps(values, ensure_ascii=False)}")
    return catalog_from_mapping(tomllib.loads("\n".join(lines) + "\n"), f"{kind}-on-{column}")


# -- the oracle: a stored value read as a field type -----------------------------------


def meaning(kind: str, value: Any) -> Any:
    """What a stored value means as `kind` (the test's own reading)."""
    if value is None:
        return None
    if kind in ("text", "enum", "id"):
        return str(value)
    if kind == "number":
        return float(value)
    if kind == "bool":
        return bool(value)
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
    else:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.date() if kind == "date" else moment


def as_json(kind: str, value: Any) -> Any:
    """The value a result row carries for a meaning (ResultRow.values)."""
    if value is None:
        return None
    if kind in ("date", "datetime"):
        return value.isoformat()
    return value


def literal(kind: str, value: Any) -> str:
    """A meaning written as a plan value."""
    if kind == "number":
        return repr(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("date", "datetime"):
        return json.dumps(value.isoformat())
    return json.dumps(value, ensure_ascii=False)


def shown(kind: str, value: Any, language: str) -> str:
    """How an answer writes a meaning."""
    if kind == "bool":
        return ("是" if value else "否") if language == "zh" else ("yes" if value else "no")
    if kind == "number":
        return str(int(value)) if float(value).is_integer() else repr(value)
    if kind == "datetime" and value == datetime(value.year, value.month, value.day, tzinfo=UTC):
        return value.date().isoformat()
    if kind in ("date", "datetime"):
        return value.isoformat()
    return str(value)
