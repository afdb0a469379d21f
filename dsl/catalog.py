"""The catalog: the whitelist of what a plan may name (docs/catalog.md).

A TOML file maps entity types onto real tables. It is validated on load and
every problem is reported at once, each naming the file and the dotted key.
Nothing outside the catalog can be queried: the normalizer binds plan names
against it and the executor takes every SQL identifier from it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qdsl.dsl.errors import ErrorType, QdslError
from qdsl.dsl.ir import Operator, QueryType
from qdsl.dsl.limits import read_file_bounded
from qdsl.dsl.operators import operators_for
from qdsl.dsl.scope_spec import ScopeSpec, check_scope, scope_fields
from qdsl.dsl.textnorm import normalize_text


class CatalogError(QdslError):
    """The catalog file itself is wrong: a deployment problem, not a plan problem."""

    type = ErrorType.USAGE


class FieldType(StrEnum):
    TEXT = "text"
    ENUM = "enum"
    NUMBER = "number"
    DATE = "date"
    DATETIME = "datetime"
    BOOL = "bool"
    ID = "id"


# Which operators make sense for which field type (`dsl.operators`, the capability
# table); the loader refuses the rest.
OPERATORS_BY_TYPE: dict[FieldType, frozenset[Operator]] = {
    t: operators_for(t.value) for t in FieldType
}

# Operators on the id and the label when the catalog does not declare them as fields.
_ID_OPERATORS = (Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN)
_LABEL_OPERATORS = (Operator.EQUALS, Operator.CONTAINS, Operator.IN)

EVIDENCE_PROJECTION = "matched_evidence"
"""A virtual projection every entity accepts: the evidence rows of each match."""


AliasGroup = tuple[str, frozenset[str]]


def alias_index(aliases: Mapping[str, Sequence[str]]) -> dict[str, AliasGroup]:
    """Normalized spelling -> (canonical key, every normalized spelling of it).

    The one place alias groups are expanded: the normalizer's values, the
    executor's `value_norm IN (...)` sets and the facts loader all match
    through the same `normalize_text`, or a lookup silently misses.
    """
    index: dict[str, AliasGroup] = {}
    for canon, spellings in aliases.items():
        group = frozenset({normalize_text(canon), *(normalize_text(s) for s in spellings)})
        for norm in group:
            index.setdefault(norm, (canon, group))
    return index


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy without the original's cached properties: they describe the
        original's content (its fingerprint, alias maps), and pydantic would
        otherwise carry them over to a copy whose content `update` changed."""
        copied = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            copied.__dict__.pop(name, None)
        return copied


def _cached_names(cls: type) -> tuple[str, ...]:
    names = _CACHED_NAMES.get(cls)
    if names is None:
        names = _CACHED_NAMES[cls] = tuple(
            name
            for klass in cls.__mro__
            for name, attr in vars(klass).items()
            if isinstance(attr, cached_property)
        )
    return names


_CACHED_NAMES: dict[type, tuple[str, ...]] = {}


class FieldSpec(_Strict):
    name: str = ""
    column: str | None = None
    fact: str | None = None
    type: FieldType = FieldType.TEXT
    values: tuple[str, ...] = ()
    operators: tuple[Operator, ...] = (Operator.EQUALS,)
    # canonical value -> every spelling that means it (the canonical one included)
    aliases: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    sensitive: bool = False
    # Words users write for the field itself (状态, status), for the rule planner.
    synonyms: tuple[str, ...] = ()
    # For id fields that point at another entity (task.project_id -> project).
    references: str | None = None
    # A text field whose values (per tenant) are matched against questions:
    # names no catalog can list (a person, a city, a carrier).
    link_values: bool = False

    @property
    def is_fact(self) -> bool:
        return self.fact is not None

    @cached_property
    def alias_lookup(self) -> dict[str, AliasGroup]:
        return alias_index(self.aliases)

    @cached_property
    def value_spellings(self) -> dict[str, str]:
        """Normalized spelling -> canonical value (canonical values match themselves);
        built once per catalog, not per plan."""
        out: dict[str, str] = {}
        for canon, spellings in self.aliases.items():
            for s in (canon, *spellings):
                out.setdefault(normalize_text(s), canon)
        for v in self.values:
            out[normalize_text(v)] = v
        return out

    def alias_group(self, value: str) -> AliasGroup | None:
        """The alias group `value` spells (any spelling, any width or case), if any."""
        return self.alias_lookup.get(normalize_text(value))


class EntitySpec(_Strict):
    name: str = ""
    table: str
    id: str = "id"
    tenant: str = "tenant_id"
    label: str
    text_search: tuple[str, ...] = ()
    default_projection: tuple[str, ...] = ()
    query_types: tuple[QueryType, ...] = ()
    sorts: tuple[str, ...] = ()
    default_sort: tuple[str, str] | None = None
    max_limit: int = Field(default=200, ge=1)
    default_limit: int = Field(default=20, ge=1)
    synonyms: tuple[str, ...] = ()
    # Other names for whitelisted names, e.g. project_id -> id (what LLMs write).
    names: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, FieldSpec] = Field(default_factory=dict)
    # The shape of this entity's ids as users write them (a regex, e.g. "TCK-\\d+");
    # without it ids are plain numbers.
    id_pattern: str | None = None
    # Query types this entity answers when a question names no entity
    # (explain -> a documents entity, diagnose -> a runs entity).
    default_for: tuple[QueryType, ...] = ()
    # Words of a question that name nothing in the catalog may be searched as text
    # (the label, or a fact field with `contains` and the text fallback) instead
    # of clarifying; the answer then says it matched text.
    text_fallback: bool = False
    # The column holding each row's last change time (a date or datetime):
    # `qdsl index refresh --since` re-indexes only rows changed since then, and
    # the index findings compare it with the index's own refresh.
    updated_at: str | None = None
    # What an explanation quotes of each row: the `text_search` column holding its
    # passage (default: the first one that is not the label) and, optionally, a
    # column naming the part of the source it comes from (a section, a chapter).
    passage: str | None = None
    passage_section: str | None = None

    @cached_property
    def passage_column(self) -> str:
        """The column an explanation quotes (the label when nothing else is searched)."""
        if self.passage is not None:
            return self.passage
        return next((c for c in self.text_search if c != self.label), self.label)

    @cached_property
    def id_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.id_pattern) if self.id_pattern else None

    @cached_property
    def whitelisted(self) -> frozenset[str]:
        """Every name a plan may project (docs/catalog.md), sensitive fields excluded."""
        names = {self.id, self.label, *self.default_projection, *self.sorts, *self.text_search}
        names.update(n for n, f in self.fields.items() if not f.sensitive)
        return frozenset(names)

    @cached_property
    def sensitive(self) -> frozenset[str]:
        found = {n for n, f in self.fields.items() if f.sensitive}
        found.update(f.column for f in self.fields.values() if f.sensitive and f.column)
        return frozenset(found)

    @cached_property
    def sensitive_folded(self) -> frozenset[str]:
        """The sensitive names casefolded, to refuse any casing of them."""
        return frozenset(s.casefold() for s in self.sensitive)

    def filter_spec(self, name: str) -> FieldSpec | None:
        """The spec of a filterable name: a declared field, or the implicit id / label.

        The id and the label are filterable without being declared; their
        operators live here so the normalizer and the executor cannot disagree.
        """
        if name in self.fields:
            return self.fields[name]
        return self._implicit_specs.get(name)

    @cached_property
    def _filter_bindings(self) -> dict[str, tuple[str, FieldSpec]]:
        """Filter names as written -> the name and spec they bind to, filled by the
        normalizer (`spec_for`), which binds each filter several times per plan."""
        return {}

    @cached_property
    def _implicit_specs(self) -> dict[str, FieldSpec]:
        """The specs of the undeclared id and label, built once (every filter on an
        id binds through them, several times per plan)."""
        out = {}
        if self.label not in self.fields:
            label = self.label
            out[label] = FieldSpec(
                name=label, column=label, type=FieldType.TEXT, operators=_LABEL_OPERATORS
            )
        if self.id not in self.fields:
            out[self.id] = FieldSpec(
                name=self.id, column=self.id, type=FieldType.ID, operators=_ID_OPERATORS
            )
        return out

    @cached_property
    def projectable(self) -> tuple[str, ...]:
        """Every name a plan may project, in a stable order, then the evidence column."""
        return (*sorted(self.whitelisted), EVIDENCE_PROJECTION)

    @cached_property
    def filterable(self) -> tuple[str, ...]:
        """Every name a filter may bind to: the declared fields, the id and the label."""
        return tuple(dict.fromkeys((*self.fields, self.id, self.label)))

    def column_for(self, name: str) -> str | None:
        """The table column behind a whitelisted name; None for fact fields."""
        spec = self.fields.get(name)
        if spec is not None:
            return spec.column
        return name if name in self.whitelisted else None


class FactsSpec(_Strict):
    table: str = "semantic_facts"


class Catalog(_Strict):
    source: str = "<memory>"
    facts: FactsSpec = FactsSpec()
    scope: ScopeSpec | None = None
    entities: dict[str, EntitySpec]

    def entity(self, name: str) -> EntitySpec:
        return self.entities[name]

    def scope_field(self, entity_type: str) -> str | None:
        """The name (a field, or the entity's id) a project scope filters `entity_type`
        on; None when the catalog declares no scope or the entity cannot be scoped."""
        return self._scope_fields.get(entity_type)

    @cached_property
    def _scope_fields(self) -> dict[str, str]:
        return scope_fields(self)

    @cached_property
    def entity_spellings(self) -> dict[str, str]:
        """Every accepted entity spelling (normalized) -> entity key; keys win over
        synonyms. Built once per catalog."""
        out: dict[str, str] = {}
        for key, ent in self.entities.items():
            for syn in ent.synonyms:
                out.setdefault(normalize_text(syn), key)
        for key in self.entities:
            out[normalize_text(key)] = key
        return out

    @cached_property
    def content_key(self) -> str:
        """A key of the catalog's content: equal catalogs, loaded apart, share caches."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()

    def default_entity(self, query_type: QueryType) -> str | None:
        """The entity a question of `query_type` means when it names none."""
        for name, e in self.entities.items():
            if query_type in e.default_for:
                return name
        return None


def _key(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _check_field(ent: str, name: str, f: FieldSpec) -> list[tuple[str, str]]:
    key = f"entities.{ent}.fields.{name}"
    out: list[tuple[str, str]] = []
    if (f.column is None) == (f.fact is None):
        which = "both" if f.column else "neither"
        out.append((key, f"a field is either a `column` or a `fact`, this one has {which}"))
    allowed = OPERATORS_BY_TYPE[f.type]
    for op in f.operators:
        if op not in allowed:
            out.append(
                (
                    f"{key}.operators",
                    f"operator `{op.value}` cannot apply to a {f.type.value} field",
                )
            )
    if f.type is FieldType.ENUM and not f.values:
        out.append((f"{key}.values", "an enum field must list its values"))
    if f.values and f.type is not FieldType.ENUM:
        out.append((f"{key}.values", "only enum fields list values"))
    for canon in f.aliases:
        if f.values and canon not in f.values:
            out.append((f"{key}.aliases.{canon}", f"`{canon}` is not one of the field's values"))
        if f.type is FieldType.BOOL and canon not in ("true", "false"):
            # A yes/no field's aliases are the words of its two states.
            out.append((f"{key}.aliases.{canon}", "a bool field's aliases are `true` and `false`"))
    if f.link_values and (f.type is not FieldType.TEXT or f.column is None):
        out.append((f"{key}.link_values", "only text columns can link their values"))
    if f.link_values and f.sensitive:
        out.append((f"{key}.link_values", "a sensitive field's values are never linked"))
    return out


# An id pattern is matched against every question: keep it small and simple.
MAX_ID_PATTERN = 200


def _check_id_pattern(key: str, pattern: str) -> list[tuple[str, str]]:
    if len(pattern) > MAX_ID_PATTERN:
        return [(f"{key}.id_pattern", f"longer than {MAX_ID_PATTERN} characters")]
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return [(f"{key}.id_pattern", f"not a valid regular expression: {exc}")]
    if compiled.match(""):
        return [(f"{key}.id_pattern", "matches the empty string")]
    return []


def _check_fields(
    name: str, e: EntitySpec, entities: Mapping[str, EntitySpec]
) -> list[tuple[str, str]]:
    key = f"entities.{name}"
    out: list[tuple[str, str]] = []
    for fname, f in e.fields.items():
        out.extend(_check_field(name, fname, f))
        if f.references is not None and f.references not in entities:
            out.append((f"{key}.fields.{fname}.references", f"no entity `{f.references}`"))
    return out


def _check_sorts(key: str, e: EntitySpec) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    fact_fields = {n for n, f in e.fields.items() if f.is_fact}
    for s in e.sorts:
        if s in fact_fields:
            out.append((f"{key}.sorts", f"`{s}` is a fact field and cannot be sorted on"))
        elif s in e.sensitive:
            out.append((f"{key}.sorts", f"`{s}` is sensitive and cannot be sorted on"))
    if e.default_sort is not None:
        fld, direction = e.default_sort
        if fld not in e.sorts:
            out.append((f"{key}.default_sort", f"sort field `{fld}` is not declared in `sorts`"))
        if direction not in ("asc", "desc"):
            out.append((f"{key}.default_sort", f"direction `{direction}` is not asc or desc"))
    return out


def _check_names(key: str, e: EntitySpec) -> list[tuple[str, str]]:
    """Projection, other spellings, limits, id shape and default query types."""
    out: list[tuple[str, str]] = []
    for p in e.default_projection:
        if p in e.sensitive:
            out.append((f"{key}.default_projection", f"`{p}` is sensitive and cannot be projected"))
    for alias, target in e.names.items():
        if target not in e.whitelisted:
            out.append((f"{key}.names.{alias}", f"`{target}` is not a whitelisted name"))
    if e.default_limit > e.max_limit:
        out.append((f"{key}.default_limit", "default_limit is above max_limit"))
    if e.id_pattern is not None:
        out.extend(_check_id_pattern(key, e.id_pattern))
    if e.text_fallback and not e.text_search:
        out.append((f"{key}.text_fallback", "text_fallback needs `text_search` columns"))
    if e.passage is not None and e.passage not in e.text_search:
        out.append((f"{key}.passage", f"`{e.passage}` is not one of the `text_search` columns"))
    if e.passage_section is not None:
        out.extend(_check_section(key, e, e.passage_section))
    for qt in e.default_for:
        if e.query_types and qt not in e.query_types:
            out.append((f"{key}.default_for", f"`{qt.value}` is not in the entity's query_types"))
    return out


def _check_section(key: str, e: EntitySpec, name: str) -> list[tuple[str, str]]:
    field = e.fields.get(name)
    if name in e.sensitive:
        return [(f"{key}.passage_section", f"`{name}` is sensitive and cannot be quoted")]
    if field is not None and field.column is None:
        return [(f"{key}.passage_section", f"`{name}` is a fact field; a section is a column")]
    if name not in e.whitelisted:
        return [(f"{key}.passage_section", f"`{name}` is not a whitelisted name")]
    return []


def _check_entity(
    name: str, e: EntitySpec, entities: Mapping[str, EntitySpec]
) -> list[tuple[str, str]]:
    key = f"entities.{name}"
    out = [*_check_fields(name, e, entities), *_check_sorts(key, e), *_check_names(key, e)]
    if e.updated_at is not None:
        out.extend(_check_updated_at(key, e))
    return out


_TIME_TYPES = frozenset({FieldType.DATE, FieldType.DATETIME})


def _check_updated_at(key: str, e: EntitySpec) -> list[tuple[str, str]]:
    """`updated_at` names a column of the entity's table holding a time.

    Its type is known only when it is also declared as a field; `qdsl catalog
    check` compares it with the live column.
    """
    name = e.updated_at or ""
    if not name.strip():
        return [(f"{key}.updated_at", "names no column")]
    if name in (e.id, e.tenant):
        return [(f"{key}.updated_at", f"`{name}` is the entity's id or tenant column")]
    named = e.fields.get(name)
    if named is not None and named.is_fact:
        return [(f"{key}.updated_at", f"`{name}` is a fact field, not a column")]
    for fname, f in e.fields.items():
        if f.column == name and f.type not in _TIME_TYPES:
            return [(f"{key}.updated_at", f"column `{name}` is the {f.type.value} field `{fname}`")]
    return []


def _check_defaults(entities: Mapping[str, EntitySpec]) -> list[tuple[str, str]]:
    """At most one entity answers a query type by default, or the choice is a guess."""
    seen: dict[QueryType, str] = {}
    out: list[tuple[str, str]] = []
    for name, e in entities.items():
        for qt in e.default_for:
            if qt in seen:
                out.append(
                    (
                        f"entities.{name}.default_for",
                        f"`{qt.value}` is already the default of entity `{seen[qt]}`",
                    )
                )
            seen.setdefault(qt, name)
    return out


def catalog_from_mapping(raw: Mapping[str, Any], source: str = "<memory>") -> Catalog:
    """Validate a parsed TOML document into a Catalog, reporting every problem."""
    data = dict(raw)
    ents = data.get("entities")
    if isinstance(ents, dict):
        patched: dict[str, Any] = {}
        for ename, raw_ent in ents.items():
            ent = raw_ent
            if isinstance(raw_ent, dict):
                ent = {"name": ename, **raw_ent}
                fields = ent.get("fields")
                if isinstance(fields, dict):
                    ent["fields"] = {
                        fn: ({**fv, "name": fn} if isinstance(fv, dict) else fv)
                        for fn, fv in fields.items()
                    }
            patched[ename] = ent
        data["entities"] = patched
    data["source"] = source
    try:
        catalog = Catalog.model_validate(data)
    except ValidationError as exc:
        problems = [(_key(err["loc"]), err["msg"]) for err in exc.errors()]
        raise _catalog_error(source, problems) from None
    problems = []
    for ename, ent in catalog.entities.items():
        problems.extend(_check_entity(ename, ent, catalog.entities))
    problems.extend(_check_defaults(catalog.entities))
    problems.extend(check_scope(catalog))
    if problems:
        raise _catalog_error(source, problems)
    return catalog


def _catalog_error(source: str, problems: list[tuple[str, str]]) -> CatalogError:
    first_key, first_msg = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return CatalogError(
        "invalid_catalog",
        f"{source}: {first_key}: {first_msg}{more}",
        hint="fix the catalog file; every problem is listed in details.problems",
        details={
            "file": source,
            "problems": [{"key": k, "message": m} for k, m in problems],
        },
    )


def load_catalog(path: str | os.PathLike[str]) -> Catalog:
    p = Path(path)
    try:
        raw = read_file_bounded(p, "catalog_bytes", f"catalog {p.name}")
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: not UTF-8 (byte {exc.start})",
            hint="save the catalog as UTF-8",
            details={"file": str(p)},
        ) from None
    except OSError as exc:
        raise CatalogError(
            "catalog_unreadable",
            f"cannot read catalog {p.name}: {exc.strerror}",
            hint="pass an existing TOML file with --catalog or QDSL_CATALOG",
            details={"file": str(p)},
        ) from None
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: nested too deeply to be a catalog",
            hint="a catalog nests tables a few levels deep",
            details={"file": str(p)},
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: not valid TOML: {exc}",
            hint="fix the TOML syntax",
            details={"file": str(p)},
        ) from None
    return catalog_from_mapping(doc, source=p.name)


_DEMO: Catalog | None = None


def demo_catalog() -> Catalog:
    """The shipped catalog describing the demo schema (parsed once per process).

    It lives with the demo (facts/demo/catalog.toml, read as a data file; the
    demo package imports no database code on import): with no catalog given,
    the embedded demo is the default deployment.
    """
    global _DEMO  # noqa: PLW0603 - a process-wide cache of an immutable value
    if _DEMO is None:
        found = resources.files("qdsl.facts.demo").joinpath("catalog.toml")
        _DEMO = catalog_from_mapping(
            tomllib.loads(found.read_text(encoding="utf-8")), source="demo catalog.toml"
        )
    return _DEMO


def resolve_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """`--catalog` over `QDSL_CATALOG` over the shipped demo catalog."""
    chosen = path or os.environ.get("QDSL_CATALOG")
    return load_catalog(chosen) if chosen else demo_catalog()
