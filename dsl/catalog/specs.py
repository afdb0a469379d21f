"""The specs of an entity: its fields, measures and relations (docs/catalog.md)."""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import Field

from qdsl.dsl.catalog.types import (
    EVIDENCE_PROJECTION,
    ID_OPERATORS,
    LABEL_OPERATORS,
    AliasGroup,
    FieldType,
    Strict,
    alias_index,
)
from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import Aggregation, Operator, QueryType
from qdsl.dsl.textnorm import normalize_text


class MeasureSpec(Strict):
    """A named aggregate: `function` over `field` (none for `count`), or the ratio
    of two declared aggregates (`numerator` / `denominator`), each written
    `measure`, `relation.measure` or `relation.relation.measure`. With `times`, the
    value aggregated is each row's `field` × `times` (revenue = quantity × unit_price):
    a derived value only the deployer declares, never a plan."""

    name: str = ""
    field: str | None = None
    times: str | None = None
    function: Aggregation | None = None
    numerator: str | None = None
    denominator: str | None = None
    # Words users write for the measure (总保费, total premium).
    synonyms: tuple[str, ...] = ()

    @property
    def is_ratio(self) -> bool:
        return self.numerator is not None or self.denominator is not None


class RelationSpec(Strict):
    """A many-to-one relation: the source's `key` holds the target's `target_key`
    (default: the target's id). Its inverse, one-to-many, is named `inverse`
    (default: the source entity's name) with `inverse_synonyms`."""

    name: str = ""
    entity: str
    key: str
    target_key: str | None = None
    synonyms: tuple[str, ...] = ()
    inverse: str | None = None
    inverse_synonyms: tuple[str, ...] = ()


class FieldSpec(Strict):
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
    # The aggregations a number field allows (count_distinct: any column field).
    aggregations: tuple[Aggregation, ...] = ()
    # The calendar periods a date or datetime field may be grouped by.
    grains: tuple[Grain, ...] = ()

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


class EntitySpec(Strict):
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
    # Declared measures (docs/catalog.md, "Measures") and many-to-one relations
    # ("Relations"; their one-to-many inverses are derived by the catalog).
    measures: dict[str, MeasureSpec] = Field(default_factory=dict)
    relations: dict[str, RelationSpec] = Field(default_factory=dict)

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
                name=label, column=label, type=FieldType.TEXT, operators=LABEL_OPERATORS
            )
        if self.id not in self.fields:
            out[self.id] = FieldSpec(
                name=self.id, column=self.id, type=FieldType.ID, operators=ID_OPERATORS
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
