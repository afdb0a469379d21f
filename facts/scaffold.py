"""`qdsl catalog init`: a draft catalog from the live schema (SQLAlchemy Inspector).

Guesses, to be reviewed: the id (the primary key column that is not the
tenant), the tenant (a column named like tenant/org/account/workspace), the
label (a short text column named like name/title/subject), a field per column
typed from its SQL type, enum candidates from low-cardinality text columns
(with the values found), sorts on indexed columns, text search on long text,
and `sensitive = true` for names like password, secret, token or email. The
draft loads with `load_catalog` and is validated before it is returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine, inspect
from sqlalchemy import types as sqltypes
from sqlalchemy.engine.interfaces import ReflectedColumn

from qdsl.dsl.catalog import FieldType, catalog_from_mapping
from qdsl.dsl.errors import UsageError
from qdsl.facts.check.declared import reflected_columns

SENSITIVE = re.compile(r"secret|passw|pwd|token|e_?mail|api_?key|ssn|credit_?card|iban", re.I)
TENANT_NAMES = (
    "tenant_id",
    "tenant",
    "org_id",
    "organization_id",
    "org",
    "account_id",
    "account",
    "workspace_id",
    "workspace",
)
ID_NAMES = ("id", "uuid", "ref", "reference", "code", "key", "number")
LABEL_NAMES = ("name", "title", "subject", "label", "display_name", "headline", "summary")
# At most this many distinct short values make a text column an enum candidate.
ENUM_MAX_VALUES = 12
ENUM_MAX_LENGTH = 40
LONG_TEXT = 200

OPERATORS: dict[FieldType, tuple[str, ...]] = {
    FieldType.TEXT: ("equals", "not_equals", "in", "not_in", "contains"),
    FieldType.ENUM: ("equals", "not_equals", "in", "not_in", "equals_or_alias"),
    FieldType.NUMBER: ("equals", "gt", "gte", "lt", "lte", "between", "is_null"),
    FieldType.DATE: ("gt", "gte", "lt", "lte", "between", "is_null"),
    FieldType.DATETIME: ("gt", "gte", "lt", "lte", "between", "is_null"),
    FieldType.BOOL: ("equals", "not_equals"),
    FieldType.ID: ("equals", "not_equals", "in", "not_in", "is_null"),
}


@dataclass
class Draft:
    toml: str
    summary: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _field_type(column: ReflectedColumn) -> FieldType:
    t, name = column["type"], column["name"].lower()
    if isinstance(t, sqltypes.Boolean):
        return FieldType.BOOL
    if isinstance(t, sqltypes.DateTime):
        return FieldType.DATETIME
    if isinstance(t, sqltypes.Date):
        return FieldType.DATE
    if name.endswith("_id") or isinstance(t, sqltypes.Uuid):
        return FieldType.ID
    if isinstance(t, sqltypes.Integer | sqltypes.Numeric | sqltypes.Float):
        return FieldType.NUMBER
    return FieldType.TEXT


def _is_text(column: ReflectedColumn) -> bool:
    return isinstance(column["type"], sqltypes.String)


def _length(column: ReflectedColumn) -> int | None:
    length = getattr(column["type"], "length", None)
    return int(length) if isinstance(length, int) else None


def _enum_values(engine: Engine, table: str, column: str) -> list[str] | None:
    col: sa.ColumnClause[Any] = sa.column(column)
    query = (
        sa.select(col)
        .select_from(sa.table(table))
        .where(col.is_not(None))
        .distinct()
        .limit(ENUM_MAX_VALUES + 1)
    )
    with engine.connect() as conn:
        values = [str(v) for v in conn.execute(query).scalars()]
        rows = conn.execute(
            sa.select(sa.func.count()).select_from(sa.table(table)).where(col.is_not(None))
        ).scalar_one()
    short = all(0 < len(v) <= ENUM_MAX_LENGTH for v in values)
    # Values that repeat: a column of distinct names is not an enum.
    if not values or len(values) > ENUM_MAX_VALUES or not short or int(rows) <= len(values):
        return None
    return sorted(values)


def _guess(names: list[str], wanted: tuple[str, ...]) -> str | None:
    lowered = {n.lower(): n for n in names}
    for w in wanted:
        if w in lowered:
            return lowered[w]
    return None


def _entity_name(table: str) -> str:
    base = table.lower().split(".")[-1]
    if base.endswith("ies"):
        return base[:-3] + "y"
    if base.endswith("s") and not base.endswith("ss"):
        return base[:-1]
    return base


def _describe(
    engine: Engine, table: str, tenant_column: str | None, notes: list[str]
) -> dict[str, Any]:
    inspector = inspect(engine)
    if not inspector.has_table(table):
        raise UsageError(
            "unknown_table",
            f"the database has no table {table!r}",
            hint="pass an existing table with --table (repeat it for several)",
            details={"tables": sorted(inspector.get_table_names())[:100]},
        )
    columns = reflected_columns(engine, table)
    names = [c["name"] for c in columns]
    tenant = tenant_column or _guess(names, TENANT_NAMES)
    if tenant is None or tenant not in names:
        raise UsageError(
            "no_tenant_column",
            f"cannot tell which column of {table!r} holds the tenant",
            hint="pass --tenant-column NAME; every catalog table needs one",
            details={"columns": names},
        )
    pk = [
        c
        for c in inspector.get_pk_constraint(table).get("constrained_columns") or []
        if c != tenant
    ]
    ident = pk[0] if len(pk) == 1 else _guess(names, ID_NAMES)
    if ident is None:
        raise UsageError(
            "no_id_column",
            f"cannot tell which column of {table!r} is its id",
            hint="give the table a primary key (tenant, id) or an `id` column",
            details={"columns": names},
        )
    by_name = {c["name"]: c for c in columns}
    sensitive = {n for n in names if SENSITIVE.search(n) and n not in (tenant, ident)}
    texts = [n for n in names if _is_text(by_name[n]) and n not in sensitive | {tenant, ident}]
    label = _guess(texts, LABEL_NAMES) or (texts[0] if texts else ident)
    fields: dict[str, dict[str, Any]] = {}
    for c in columns:
        name = c["name"]
        if name in (tenant, ident):
            continue
        kind = _field_type(c)
        spec: dict[str, Any] = {"column": name, "type": kind.value}
        if name in sensitive:
            spec.update(operators=["equals"], sensitive=True)
            notes.append(f"{table}.{name}: marked sensitive (by its name); review")
        elif kind is FieldType.TEXT and name != label:
            length = _length(c)
            values = (
                None if length is None or length > LONG_TEXT else _enum_values(engine, table, name)
            )
            if values is not None:
                kind = FieldType.ENUM
                spec.update(type=kind.value, values=values)
            spec["operators"] = list(OPERATORS[kind])
        else:
            spec["operators"] = list(OPERATORS[kind])
        fields[name] = spec
    sorts = _sorts(inspector, table, names, exclude=sensitive | {tenant, ident}, fields=fields)
    long_text = [
        n for n in texts if n == label or (_length(by_name[n]) or LONG_TEXT + 1) > LONG_TEXT
    ]
    enums = [n for n, f in fields.items() if f["type"] == FieldType.ENUM.value]
    entity: dict[str, Any] = {
        "table": table,
        "id": ident,
        "tenant": tenant,
        "label": label,
        "text_search": [n for n in long_text if fields.get(n, {}).get("type") != "enum"],
        "default_projection": [ident, *([label] if label != ident else []), *enums[:3]],
        "query_types": ["existence", "count", "list", "status", "compare"],
        "sorts": sorts,
        "max_limit": 200,
        "synonyms": [table],
        "fields": fields,
    }
    return entity


def _sorts(
    inspector: Any, table: str, names: list[str], *, exclude: set[str], fields: dict[str, Any]
) -> list[str]:
    """Columns that lead an index (after the tenant): sorting on them is cheap."""
    leading = set()
    for ix in [*inspector.get_indexes(table), inspector.get_pk_constraint(table)]:
        cols = [c for c in ix.get("column_names") or ix.get("constrained_columns") or [] if c]
        cols = [c for c in cols if c not in exclude] if cols and cols[0] in exclude else cols
        if cols:
            leading.add(cols[0])
    sortable = (
        FieldType.TEXT.value,
        FieldType.NUMBER.value,
        FieldType.DATE.value,
        FieldType.DATETIME.value,
    )
    return [
        n
        for n in names
        if n in leading and n not in exclude and fields.get(n, {}).get("type") in sortable
    ]


_BARE = re.compile(r"[A-Za-z0-9_-]+\Z")


def _key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    # A JSON string of text is a valid TOML basic string.
    return json.dumps(str(value), ensure_ascii=False)


def to_toml(entities: dict[str, dict[str, Any]], facts_table: str) -> str:
    lines = [
        "# Draft catalog written by `qdsl catalog init`: every guess below is to be",
        "# reviewed (ids, tenants, labels, enum values, sensitive columns), then run",
        '# `qdsl catalog check`. Fact fields (`fact = "predicate"`) are added by hand.',
        "",
        "[facts]",
        f"table = {_value(facts_table)}",
    ]
    for name, entity in entities.items():
        lines += ["", f"[entities.{_key(name)}]"]
        lines += [f"{k} = {_value(v)}" for k, v in entity.items() if k != "fields"]
        for fname, spec in entity["fields"].items():
            lines += ["", f"[entities.{_key(name)}.fields.{_key(fname)}]"]
            lines += [f"{k} = {_value(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"


def draft_catalog(
    engine: Engine,
    tables: list[str],
    *,
    tenant_column: str | None = None,
    facts_table: str = "semantic_facts",
) -> Draft:
    notes: list[str] = []
    entities: dict[str, dict[str, Any]] = {}
    for table in tables:
        name = _entity_name(table)
        if name in entities:
            name = table
        entities[name] = _describe(engine, table, tenant_column, notes)
    text = to_toml(entities, facts_table)
    import tomllib

    # The draft must load: validate it the way `--catalog` will.
    catalog_from_mapping(tomllib.loads(text), source="draft")
    summary = [f"{n} ({e['table']})" for n, e in entities.items()]
    return Draft(toml=text, summary=summary, notes=notes)
