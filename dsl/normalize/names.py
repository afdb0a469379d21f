"""Name resolution against one catalog entity (no errors here: the rules decide).

A name written in a plan resolves, in order: as written, through the entity's
`names` table (project_id -> id, what LLMs write), then case-insensitively
against both. The entity's id and label are filterable even when the catalog
does not declare them under `fields`.
"""

from __future__ import annotations

from collections.abc import Iterable

from qdsl.dsl.catalog import EVIDENCE_PROJECTION, EntitySpec, FieldSpec

EVIDENCE_NAMES = frozenset({EVIDENCE_PROJECTION, "evidence"})


def _lookup(name: str, known: Iterable[str], names: dict[str, str]) -> str | None:
    known = tuple(known)
    if name in known:
        return name
    if names.get(name) in known:
        return names[name]
    folded = name.casefold()
    hits = {k for k in known if k.casefold() == folded}
    hits |= {t for a, t in names.items() if a.casefold() == folded and t in known}
    return hits.pop() if len(hits) == 1 else None


def filterable(ent: EntitySpec) -> tuple[str, ...]:
    return ent.filterable


def resolve_filter_field(ent: EntitySpec, name: str) -> str | None:
    return _lookup(name, filterable(ent), ent.names)


def field_spec(ent: EntitySpec, name: str) -> FieldSpec | None:
    """The spec of a filterable name; the implicit id and label get a fixed one."""
    return ent.filter_spec(name)


def projectable(ent: EntitySpec) -> tuple[str, ...]:
    return ent.projectable


def resolve_projection(ent: EntitySpec, name: str) -> str | None:
    if name.casefold() in EVIDENCE_NAMES:
        return EVIDENCE_PROJECTION
    return _lookup(name, projectable(ent), ent.names)


def resolve_sort_field(ent: EntitySpec, name: str) -> str | None:
    return _lookup(name, ent.sorts, ent.names)


def is_sensitive(ent: EntitySpec, written: str, resolved: str | None) -> bool:
    """Whether a name means a sensitive field, however it was spelled."""
    if written in ent.sensitive or resolved in ent.sensitive:
        return True
    return written.casefold() in ent.sensitive_folded
