"""The template registry: which (entity_type, query_type) pairs can be executed.

Templates are generic per query type (`dsl.kinds.TemplateShape`, declared with
the query type's record) and parametrized by the catalog entity; a pair is
covered when the catalog enables the query type for the entity and the entity
has what the template reads (explain needs text to cite, diagnose needs facts
to report). Everything else fails closed with `not_covered/template_not_covered`
(exit 4): there is no default template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import KINDS, TemplateShape


@dataclass(frozen=True)
class Template:
    entity_type: str
    query_type: QueryType
    shape: TemplateShape

    @cached_property
    def name(self) -> str:
        return f"{self.entity_type}.{self.query_type.value}"


def registry(catalog: Catalog) -> dict[tuple[str, QueryType], Template]:
    """Every covered pair of the catalog and its template."""
    out: dict[tuple[str, QueryType], Template] = {}
    for name, spec in catalog.entities.items():
        for qt in spec.query_types:
            shape = KINDS[qt].template
            if shape is not None and shape.unusable(spec) is None:
                out[(name, qt)] = Template(name, qt, shape)
    return out


def template_for(catalog: Catalog, entity_type: str, query_type: QueryType) -> Template:
    """The template of a pair, or `not_covered/template_not_covered`."""
    spec = catalog.entities.get(entity_type)
    # One per entity spec and query type: worked out for every plan prepared.
    found = _FOUND.get((id(spec), entity_type, query_type))
    if found is not None and found[0] is spec:
        return found[1]
    shape = KINDS[query_type].template
    if spec is not None and shape is not None and query_type in spec.query_types:
        why = shape.unusable(spec)
        if why is None:
            template = Template(entity_type, query_type, shape)
            if len(_FOUND) >= _MAX_FOUND:
                _FOUND.clear()
            # the entry holds its spec, so the id in its key is not reused while it is kept
            _FOUND[(id(spec), entity_type, query_type)] = (spec, template)
            return template
        reason = f"the {query_type.value} template cannot serve `{entity_type}`: {why}"
    elif spec is None:
        reason = f"no entity `{entity_type}` in the catalog"
    elif shape is None:
        reason = f"`{query_type.value}` plans are never executed (clarify instead)"
    else:
        reason = f"the catalog does not enable {query_type.value} for `{entity_type}`"
    covered = sorted(qt.value for (e, qt) in registry(catalog) if e == entity_type)
    return _raise(entity_type, query_type, reason, covered)


_FOUND: dict[tuple[int, str, QueryType], tuple[EntitySpec, Template]] = {}
_MAX_FOUND = 1024


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
