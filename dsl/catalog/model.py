"""The catalog model: entities, the facts table, the scope and the time zone."""

from __future__ import annotations

import hashlib
from functools import cached_property
from zoneinfo import ZoneInfo

from qdsl.dsl.catalog.relations import RelationStep, relation_table
from qdsl.dsl.catalog.scope_spec import ScopeSpec, scope_fields
from qdsl.dsl.catalog.specs import EntitySpec
from qdsl.dsl.catalog.types import Strict
from qdsl.dsl.ir import QueryType
from qdsl.dsl.textnorm import normalize_text

DEFAULT_TIMEZONE = "UTC"


class FactsSpec(Strict):
    table: str = "semantic_facts"


class Catalog(Strict):
    source: str = "<memory>"
    facts: FactsSpec = FactsSpec()
    scope: ScopeSpec | None = None
    # The IANA zone calendar periods (grains, "this month") are read in.
    timezone: str = DEFAULT_TIMEZONE
    entities: dict[str, EntitySpec]

    def entity(self, name: str) -> EntitySpec:
        return self.entities[name]

    @cached_property
    def zone(self) -> ZoneInfo:
        """The catalog's time zone (validated when the catalog loads)."""
        return ZoneInfo(self.timezone)

    @cached_property
    def relation_steps(self) -> dict[str, dict[str, RelationStep]]:
        """Entity -> relation name -> its join step, the derived inverses included."""
        return relation_table(self.entities)[0]

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
