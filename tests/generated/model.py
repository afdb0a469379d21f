"""A generated deployment: its entities, the SQL type of every column, its rows and facts.

The model is plain data, readable when Hypothesis prints a failing example.
Values are held as the oracle reads them: text as str, numbers as Decimal,
dates as `date`, times as aware UTC `datetime`, yes/no as bool, ids as the
string a user writes ("E-4", "4", a UUID). How each one is stored is the
column type's business (tests/generated/database.py).

`catalog_mapping` is the catalog a deployer would write for it, `catalog_toml`
the same as a TOML file.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cached_property
from typing import Any, Literal

from generated.vocab import Concept, Kind, Noun

from qdsl.dsl.catalog import Catalog, catalog_from_mapping

Dialect = Literal["sqlite", "postgresql"]
Value = str | Decimal | date | datetime | bool | None
TENANTS: tuple[str, str] = ("tenant-a", "tenant-b")
UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

OPERATORS: dict[Kind, tuple[str, ...]] = {
    "enum": ("equals", "not_equals", "in", "not_in", "equals_or_alias"),
    "bool": ("equals", "not_equals"),
    "number": ("equals", "gt", "gte", "lt", "lte", "between", "is_null"),
    "date": ("gt", "gte", "lt", "lte", "between", "is_null"),
    "datetime": ("gt", "gte", "lt", "lte", "between", "is_null"),
    "text": ("equals", "not_equals", "in", "not_in"),
    "fact": ("equals", "equals_or_alias", "not_equals", "in", "not_in"),
}


# what a number field lets a measure question ask (its catalog `aggregations`)
AGGREGATIONS = ("sum", "avg", "min", "max")


@dataclass(frozen=True)
class Field:
    concept: Concept
    sql: str | None  # the column's SQL type as the deployer wrote it; None for a fact
    nullable: bool = False

    @property
    def name(self) -> str:
        return self.concept.key

    @property
    def kind(self) -> Kind:
        return self.concept.kind

    def __repr__(self) -> str:
        return f"{self.name}:{self.kind}[{self.sql or 'fact'}{'?' if self.nullable else ''}]"


@dataclass(frozen=True)
class Passages:
    """A documented entity: each row holds a passage an explanation quotes (TEXT
    columns, text_search), and maybe the part of the source it comes from."""

    column: str
    section: str | None
    # the catalog names `passage`; otherwise its default (the first text_search
    # column that is not the label) has to find the column
    declared: bool

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,) if self.section is None else (self.column, self.section)


@dataclass(frozen=True)
class Entity:
    noun: Noun
    id_sql: str  # INTEGER, BIGINT, TEXT, VARCHAR(32), UUID
    label_sql: str
    fields: tuple[Field, ...]
    passages: Passages | None = None

    @property
    def name(self) -> str:
        return self.noun.key

    @property
    def table(self) -> str:
        return self.noun.en_plural

    @property
    def text_ids(self) -> bool:
        return self.id_sql in ("TEXT", "VARCHAR(32)")

    def id_of(self, n: int) -> str:
        """The id of the n-th row (1-based), as a user writes it; the same in every tenant."""
        if self.id_sql == "UUID":
            return str(uuid.UUID(int=(0x5EED << 64) + n))
        return f"{self.noun.prefix}{n}" if self.text_ids else str(n)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def __repr__(self) -> str:
        quoted = f", passages {self.passages}" if self.passages else ""
        return f"{self.name}(id {self.id_sql}, label {self.label_sql}: {list(self.fields)}{quoted})"


Row = dict[str, Value]  # "id", "label", one key per column field and per passage column


@dataclass(frozen=True)
class Relation:
    """A declared many-to-one relation: each `child` row's `key` column holds the id of
    one `parent` row of its tenant, or of none (no such id, or only the other tenant
    holds it); its inverse, one-to-many, reaches the parent's children."""

    name: str
    child: str
    parent: str
    key: str
    key_sql: str  # an id column type fitting the parent's ids
    synonyms: tuple[str, ...]
    inverse: str
    inverse_synonyms: tuple[str, ...]

    def __repr__(self) -> str:
        return (
            f"{self.child}.{self.name} -> {self.parent} (key {self.key} {self.key_sql}, "
            f"inverse {self.inverse})"
        )


@dataclass(frozen=True)
class Fact:
    tenant: str
    entity: str
    entity_id: str
    predicate: str
    value_text: str  # as the fact's source spelled it (any alias)
    canon: str  # the canonical value it means

    def __repr__(self) -> str:
        return f"{self.tenant}/{self.entity}:{self.entity_id}.{self.predicate}={self.value_text!r}"


@dataclass(frozen=True)
class Deployment:
    dialect: Dialect
    now: datetime
    entities: tuple[Entity, ...]
    # (tenant, entity name) -> rows
    rows: tuple[tuple[tuple[str, str], tuple[Row, ...]], ...]
    facts: tuple[Fact, ...]
    relations: tuple[Relation, ...] = ()

    def entity(self, name: str) -> Entity:
        return next(e for e in self.entities if e.name == name)

    def parent_of(self, tenant: str, rel: Relation, child: Row) -> Row | None:
        """The child's parent row in its own tenant: never one of the other tenant."""
        key = child.get(rel.key)
        return next((r for r in self.rows_of(tenant, rel.parent) if r["id"] == key), None)

    def rows_of(self, tenant: str, entity: str) -> tuple[Row, ...]:
        return dict(self.rows)[tenant, entity]

    def facts_of(self, tenant: str, entity: str, entity_id: str) -> dict[str, set[str]]:
        """predicate -> the canonical values the object holds."""
        out: dict[str, set[str]] = {}
        for f in self.facts:
            if (f.tenant, f.entity, f.entity_id) == (tenant, entity, entity_id):
                out.setdefault(f.predicate, set()).add(f.canon)
        return out

    @cached_property
    def catalog(self) -> Catalog:
        return catalog_from_mapping(catalog_mapping(self), source="<generated>")

    def __repr__(self) -> str:
        sizes = {f"{t}/{e}": len(r) for (t, e), r in self.rows}
        related = f", relations {list(self.relations)}" if self.relations else ""
        return (
            f"Deployment({self.dialect}, now={self.now.isoformat()}, {list(self.entities)}, "
            f"rows {sizes}, {len(self.facts)} facts{related})"
        )


def _field_mapping(f: Field) -> dict[str, Any]:
    c = f.concept
    out: dict[str, Any] = {}
    if f.kind == "fact":
        out["fact"] = c.key
    else:
        out["column"] = c.key
        out["type"] = f.kind
    if c.values and f.kind == "enum":
        out["values"] = [v.canon for v in c.values]
    out["operators"] = list(OPERATORS[f.kind])
    out["synonyms"] = [*c.zh, *c.en]
    if c.values:
        out["aliases"] = {v.canon: list(v.spellings) for v in c.values}
    if f.kind == "text":
        out["link_values"] = True
    if f.kind == "number":
        out["aggregations"] = list(AGGREGATIONS)
    if f.kind in ("date", "datetime"):
        out["grains"] = ["month", "year"]  # generated/breakdowns.py asks per month or year
    return out


def _entity_mapping(e: Entity) -> dict[str, Any]:
    columns = [f.name for f in e.fields if f.kind != "fact"]
    out: dict[str, Any] = {
        "table": e.table,
        "id": "id",
        "tenant": "tenant_id",
        "label": "name",
        "text_search": ["name"],
        "default_projection": ["id", "name"],
        "query_types": [
            "existence",
            "count",
            "list",
            "status",
            "compare",
            "aggregate",
            "breakdown",
        ],
        "sorts": ["name", *(n for n in columns if e.field(n).kind != "bool")],
        "max_limit": 100,
        "default_limit": 50,
        "synonyms": [e.noun.zh, e.noun.en, e.noun.en_plural],
        "fields": {f.name: _field_mapping(f) for f in e.fields},
    }
    if e.passages is not None:
        p = e.passages
        out["text_search"] = ["name", p.column]
        out["query_types"] = [*out["query_types"], "explain"]
        out["default_for"] = ["explain"]
        if p.declared:
            out["passage"] = p.column
        if p.section is not None:
            out["passage_section"] = p.section
            out["sorts"] = [*out["sorts"], p.section]  # whitelisted, never projected
    if e.id_sql == "UUID":
        out["id_pattern"] = UUID_PATTERN
    elif e.text_ids:
        out["id_pattern"] = f"{e.noun.prefix}\\d+"
    return out


def _relation_mapping(rel: Relation) -> dict[str, Any]:
    return {
        "entity": rel.parent,
        "key": rel.key,
        "synonyms": list(rel.synonyms),
        "inverse": rel.inverse,
        "inverse_synonyms": list(rel.inverse_synonyms),
    }


def catalog_mapping(dep: Deployment) -> dict[str, Any]:
    entities = {e.name: _entity_mapping(e) for e in dep.entities}
    for rel in dep.relations:
        entities[rel.child].setdefault("relations", {})[rel.name] = _relation_mapping(rel)
    return {"facts": {"table": "semantic_facts"}, "entities": entities}


def toml_value(value: Any) -> str:
    """One TOML value (inline tables and arrays), enough for catalogs and case files."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def toml_key(key: str) -> str:
    return (
        key
        if key.replace("_", "").replace("-", "").isalnum() and key.isascii()
        else (json.dumps(key, ensure_ascii=False))
    )


def catalog_toml(dep: Deployment) -> str:
    """The catalog as a deployer's TOML file."""
    lines = ["[facts]", 'table = "semantic_facts"']
    for name, ent in catalog_mapping(dep)["entities"].items():
        fields = ent.pop("fields")
        relations = ent.pop("relations", {})
        lines += ["", f"[entities.{name}]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in ent.items()]
        lines += [f"relations.{toml_key(r)} = {toml_value(v)}" for r, v in relations.items()]
        for fname, spec in fields.items():
            lines += ["", f"[entities.{name}.fields.{fname}]"]
            lines += [f"{k} = {toml_value(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"
