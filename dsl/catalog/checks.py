"""Checks of an entity's own keys, run once the model validated (docs/catalog.md).

Each returns (dotted key, message) pairs; the loader reports them all at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from qdsl.dsl.catalog.specs import EntitySpec, FieldSpec
from qdsl.dsl.catalog.types import OPERATORS_BY_TYPE, TIME_TYPES, FieldType
from qdsl.dsl.ir import QueryType


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


def check_entity(
    name: str, e: EntitySpec, entities: Mapping[str, EntitySpec]
) -> list[tuple[str, str]]:
    key = f"entities.{name}"
    out = [*_check_fields(name, e, entities), *_check_sorts(key, e), *_check_names(key, e)]
    if e.updated_at is not None:
        out.extend(_check_updated_at(key, e))
    return out


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
        if f.column == name and f.type not in TIME_TYPES:
            return [(f"{key}.updated_at", f"column `{name}` is the {f.type.value} field `{fname}`")]
    return []


def check_defaults(entities: Mapping[str, EntitySpec]) -> list[tuple[str, str]]:
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
