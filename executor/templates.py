"""The template registry: which (entity_type, query_type) pairs can be executed.

Templates are generic per query type and parametrized by the catalog entity;
a pair is covered when the catalog enables the query type for the entity and
the entity has what the template reads (explain needs text to cite, diagnose
needs facts to report). Everything else fails closed with
`not_covered/template_not_covered` (exit 4): there is no default template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.ir import QueryType


@dataclass(frozen=True)
class TemplateKind:
    """What one query type's template reads (see `executor.statements`)."""

    query_type: QueryType
    # a count(*) of the matches (count, list)
    counts: bool = False
    # every fact of each matched entity (snapshots, passages' topics, error facts)
    entity_facts: bool = False
    # project every non-sensitive column, not only the plan's projection
    snapshot: bool = False
    # project the text_search columns (passages to cite)
    passages: bool = False
    # how many distinct subjects (ids) the plan must name
    min_subjects: int = 0
    # why an entity cannot use this template, or None when it can
    unusable: Callable[[EntitySpec], str | None] = lambda _e: None


def _needs_text(e: EntitySpec) -> str | None:
    return None if e.text_search else "it has no text_search columns to cite"


def _needs_facts(e: EntitySpec) -> str | None:
    has_fact = any(f.is_fact for f in e.fields.values())
    return None if has_fact else "it has no fact fields to report as findings"


KINDS: dict[QueryType, TemplateKind] = {
    QueryType.EXISTENCE: TemplateKind(QueryType.EXISTENCE),
    QueryType.COUNT: TemplateKind(QueryType.COUNT, counts=True),
    QueryType.LIST: TemplateKind(QueryType.LIST, counts=True),
    QueryType.STATUS: TemplateKind(QueryType.STATUS, entity_facts=True, snapshot=True),
    QueryType.EXPLAIN: TemplateKind(
        QueryType.EXPLAIN, entity_facts=True, passages=True, unusable=_needs_text
    ),
    QueryType.DIAGNOSE: TemplateKind(
        QueryType.DIAGNOSE, entity_facts=True, snapshot=True, unusable=_needs_facts
    ),
    QueryType.COMPARE: TemplateKind(
        QueryType.COMPARE, entity_facts=True, snapshot=True, min_subjects=2
    ),
}


@dataclass(frozen=True)
class Template:
    entity_type: str
    kind: TemplateKind

    @property
    def query_type(self) -> QueryType:
        return self.kind.query_type

    @property
    def name(self) -> str:
        return f"{self.entity_type}.{self.kind.query_type.value}"


def registry(catalog: Catalog) -> dict[tuple[str, QueryType], Template]:
    """Every covered pair of the catalog and its template."""
    out: dict[tuple[str, QueryType], Template] = {}
    for name, spec in catalog.entities.items():
        for qt in spec.query_types:
            kind = KINDS.get(qt)
            if kind is not None and kind.unusable(spec) is None:
                out[(name, qt)] = Template(name, kind)
    return out


def template_for(catalog: Catalog, entity_type: str, query_type: QueryType) -> Template:
    """The template of a pair, or `not_covered/template_not_covered`."""
    spec = catalog.entities.get(entity_type)
    kind = KINDS.get(query_type)
    if spec is not None and kind is not None and query_type in spec.query_types:
        why = kind.unusable(spec)
        if why is None:
            return Template(entity_type, kind)
        reason = f"the {query_type.value} template cannot serve `{entity_type}`: {why}"
    elif spec is None:
        reason = f"no entity `{entity_type}` in the catalog"
    elif kind is None:
        reason = f"`{query_type.value}` plans are never executed (clarify instead)"
    else:
        reason = f"the catalog does not enable {query_type.value} for `{entity_type}`"
    covered = sorted(qt.value for (e, qt) in registry(catalog) if e == entity_type)
    return _raise(entity_type, query_type, reason, covered)


def _raise(entity_type: str, query_type: QueryType, reason: str, covered: list[str]) -> Template:
    hint = (
        f"`{entity_type}` supports: {', '.join(covered)}"
        if covered
        else "see `qdsl catalog` for the covered entity/query type pairs"
    )
    raise NotCoveredError(
        "template_not_covered",
        f"no template for {query_type.value} over {entity_type}: {reason}",
        hint=hint,
        details={"entity_type": entity_type, "query_type": query_type.value, "covered": covered},
    )
