"""`qdsl catalog init`: a draft catalog from the live schema (SQLAlchemy Inspector).

Guesses, to be reviewed: the id (the primary key column that is not the
tenant), the tenant (a column named like tenant/org/account/workspace), the
label (a short text column named like name/title/subject), a field per column
typed from its SQL type, enums from low-cardinality text columns whatever
their declared type (TEXT too), with only the values every tenant holds
(a column with values of some tenants only gets `link_values`:
facts.scaffold_values), `references` from foreign keys and from `<x>_id`
columns whose x names another drafted entity, sorts on indexed columns,
`text_search` on prose only (the label and long-valued text, never an id, an
enum or linked values), `sensitive = true` for names like password,
secret, token or email, and relations, aggregations, grains and a count
measure (facts.scaffold_analytics). The draft loads with `load_catalog` and is validated
before it is returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, inspect
from sqlalchemy import types as sqltypes
from sqlalchemy.engine.interfaces import ReflectedColumn

from qdsl.dsl.catalog import FieldType, catalog_from_mapping
from qdsl.dsl.errors import UsageError
from qdsl.facts.check.declared import reflected_columns
from qdsl.facts.scaffold_analytics import add_measures, add_relations
from qdsl.facts.scaffold_values import ENUM_MAX_LENGTH, longest_value, value_profile

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
    keys = _foreign_key_columns(inspector, table, tenant)
    sensitive = {n for n in names if SENSITIVE.search(n) and n not in (tenant, ident)}
    texts = [n for n in names if _is_text(by_name[n]) and n not in sensitive | {tenant, ident}]
    label = _guess(texts, LABEL_NAMES) or (texts[0] if texts else ident)
    fields: dict[str, dict[str, Any]] = {}
    for c in columns:
        name = c["name"]
        if name in (tenant, ident):
            continue
        kind = FieldType.ID if name in keys else _field_type(c)
        spec: dict[str, Any] = {"column": name, "type": kind.value}
        if name in sensitive:
            spec.update(operators=["equals"], sensitive=True)
            notes.append(f"{table}.{name}: marked sensitive (by its name); review")
        elif kind is FieldType.TEXT and name != label:
            profile = value_profile(engine, table, name, tenant)
            if profile is not None and profile.enum:
                kind = FieldType.ENUM
                spec.update(type=kind.value, values=list(profile.shared))
            elif profile is not None:
                spec["link_values"] = True
                notes.append(
                    f"{table}.{name}: {profile.unshared} of its values are held by some "
                    "tenants only; drafted as per-tenant linked values (link_values), "
                    "not an enum every tenant would see"
                )
            spec["operators"] = list(OPERATORS[kind])
        else:
            spec["operators"] = list(OPERATORS[kind])
        fields[name] = spec
    sorts = _sorts(inspector, table, names, exclude=sensitive | {tenant, ident}, fields=fields)
    prose = [n for n in texts if n == label or _is_prose(engine, table, by_name[n], fields[n])]
    enums = [n for n, f in fields.items() if f["type"] == FieldType.ENUM.value]
    entity: dict[str, Any] = {
        "table": table,
        "id": ident,
        "tenant": tenant,
        "label": label,
        "text_search": prose,
        "default_projection": [ident, *([label] if label != ident else []), *enums[:3]],
        "query_types": ["existence", "count", "list", "status", "compare"],
        "sorts": sorts,
        "max_limit": 200,
        "synonyms": [table],
        "fields": fields,
    }
    return entity


def _is_prose(engine: Engine, table: str, column: ReflectedColumn, spec: dict[str, Any]) -> bool:
    """Long text a question searches in: not an id, an enum or linked values."""
    if spec["type"] != FieldType.TEXT.value or spec.get("link_values") or spec.get("sensitive"):
        return False
    if (_length(column) or LONG_TEXT + 1) <= LONG_TEXT:
        return False
    return longest_value(engine, table, column["name"]) > ENUM_MAX_LENGTH


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


def _foreign_key_columns(inspector: Any, table: str, tenant: str) -> dict[str, str]:
    """Column -> referred table, for each foreign key of one column beside the tenant."""
    out = {}
    for fk in inspector.get_foreign_keys(table):
        cols = [c for c in fk.get("constrained_columns") or [] if c != tenant]
        if len(cols) == 1 and fk.get("referred_table"):
            out[cols[0]] = str(fk["referred_table"])
    return out


def _add_references(engine: Engine, entities: dict[str, dict[str, Any]], notes: list[str]) -> None:
    """`references` on id fields: from foreign keys, else `<x>_id` naming a drafted entity."""
    by_table = {e["table"]: name for name, e in entities.items()}
    inspector = inspect(engine)
    for name, entity in entities.items():
        fields: dict[str, dict[str, Any]] = entity["fields"]
        targets = {
            column: by_table[referred]
            for column, referred in _foreign_key_columns(
                inspector, entity["table"], entity["tenant"]
            ).items()
            if referred in by_table
        }
        for column in fields:
            stem = column.lower().removesuffix("_id")
            if column not in targets and stem != column.lower():
                target = stem if stem in entities else by_table.get(stem)
                if target is not None:
                    targets[column] = target
        for column, target in targets.items():
            spec = fields.get(column, {})
            if spec.get("type") == FieldType.ID.value and target != name:
                spec["references"] = target
                notes.append(f"{entity['table']}.{column}: references {target}; review")


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


_PARTS = ("fields", "measures", "relations")


def to_toml(entities: dict[str, dict[str, Any]], facts_table: str) -> str:
    lines = [
        "# Draft catalog written by `qdsl catalog init`. Review every guess, then run",
        "# `qdsl catalog check`:",
        "# - id, tenant and label of each entity;",
        "# - enum `values`: only values every tenant holds are listed (every tenant sees",
        "#   them); a column with values of some tenants only has `link_values = true`",
        "#   (matched per tenant). Add a value all tenants may see by hand, never one",
        "#   tenant's names;",
        "# - `references` (from foreign keys and `<x>_id` columns) and `text_search`",
        "#   (prose columns only: add or drop columns a question should search);",
        "# - `sensitive = true` (guessed from column names): a sensitive column is",
        "#   never shown; mark every other one that must not be;",
        "# - `relations` (one per `references`, many-to-one; `inverse` names the",
        "#   one-to-many way back): drop a join no question should make;",
        "# - `aggregations` on number columns (drop `sum` where a total means",
        "#   nothing: prices, rates), `grains` on dates, and `timezone` (the zone",
        "#   months and years are read in; an IANA name).",
        '# Fact fields (`fact = "predicate"`), measures with their words and synonyms',
        "# are added by hand.",
        "",
        'timezone = "UTC"',
        "",
        "[facts]",
        f"table = {_value(facts_table)}",
    ]
    for name, entity in entities.items():
        lines += ["", f"[entities.{_key(name)}]"]
        lines += [f"{k} = {_value(v)}" for k, v in entity.items() if k not in _PARTS]
        for part in _PARTS:
            for fname, spec in entity.get(part, {}).items():
                lines += ["", f"[entities.{_key(name)}.{part}.{_key(fname)}]"]
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
    _add_references(engine, entities, notes)
    add_measures(entities, notes)
    add_relations(engine, entities, notes)
    text = to_toml(entities, facts_table)
    import tomllib

    # The draft must load: validate it the way `--catalog` will.
    catalog_from_mapping(tomllib.loads(text), source="draft")
    summary = [f"{n} ({e['table']})" for n, e in entities.items()]
    return Draft(toml=text, summary=summary, notes=notes)
