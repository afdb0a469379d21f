"""One fact row, checked against the catalog and the schema before it is staged.

`validate_row(raw, facts)` returns the row as facts.load stages it, or raises
ValueError saying what is wrong with it (facts.load reports it with its line):

* `tenant_id` present, without surrounding blanks or control characters, and
  the load's tenant when the load is restricted to one (`tenant=`);
* `entity_type` an entity of the catalog, `predicate` declared as a `fact`
  field of it, `entity_id` and `value_text` present; no unknown keys;
* every text fits its column and holds no NUL and no lone surrogate (a
  `\\ud800` escape: no database can store it, no output can print it);
* `value_norm = normalize_text(value_text)` fits the lookup index
  (facts.index_bounds); a `value_norm` in the row is accepted and recomputed;
* numbers finite, `confidence` within 0..1, instants ISO-8601 within the
  years a datetime holds, `valid_until` not before `observed_at`; a number
  fact takes `value_num` from its text when the row gives none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from qdsl.dsl.catalog import Catalog, FieldType
from qdsl.dsl.settings.limits import has_surrogate
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.index_bounds import btree_max_item, index_entry_bytes, value_room
from qdsl.facts.tables import semantic_facts

__all__ = [
    "DEFAULT_SOURCE_TYPE",
    "FACT_KEYS",
    "OPTIONAL",
    "RECOMPUTED",
    "REQUIRED",
    "fact_fields",
    "validate_row",
]

REQUIRED = ("tenant_id", "entity_type", "entity_id", "predicate", "value_text")
OPTIONAL = ("value_num", "source_type", "source_ref", "confidence", "observed_at", "valid_until")
FACT_KEYS: tuple[str, ...] = (*REQUIRED, *OPTIONAL)
# Accepted and recomputed: an export of semantic_facts carries it, but only
# normalize_text's spelling is ever matched, so the loader always writes its own.
RECOMPUTED = ("value_norm",)
DEFAULT_SOURCE_TYPE = "load"
# Column widths of semantic_facts: a longer value is the row's fault, named here
# rather than as a database error for the whole load.
_WIDTHS = {
    name: col.type.length
    for name, col in semantic_facts.c.items()
    if isinstance(col.type, sa.String) and col.type.length
}
_SHOWN_KEY = 60


def _shown(key: str) -> str:
    """A key of the row fit for a message: escaped when unprintable, cut when long."""
    text = key if key.isprintable() else ascii(key)
    return text if len(text) <= _SHOWN_KEY else text[: _SHOWN_KEY - 1] + "…"


def _text(raw: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = raw.get(key)
    if type(value) is str:  # the common case first: this runs per field per row
        text = value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)  # ids written as JSON numbers
    elif value is None:
        text = ""
    else:
        raise ValueError(f"{key} must be text, not {type(value).__name__}")
    if not text or text.isspace():
        if required:
            raise ValueError(f"{key} is missing")
        return None
    if "\x00" in text:
        raise ValueError(f"{key} contains a NUL character")
    if has_surrogate(text):
        raise ValueError(
            f"{key} holds a lone surrogate (an escape such as \\ud800 that is no character)"
        )
    width = _WIDTHS.get(key)
    if width is not None and len(text) > width:
        raise ValueError(f"{key} is longer than {width} characters")
    return text


def _number(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a number, not a boolean")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{key} must be a number, not {value!r:.40}") from None
    if not math.isfinite(number):
        raise ValueError(f"{key} must be a finite number")
    return number


def _instant(raw: Mapping[str, Any], key: str) -> datetime | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, datetime):
            moment = value
        else:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        # OverflowError: year 1 or 9999 pushed past the calendar by its offset
        raise ValueError(f"{key} must be an ISO-8601 instant, not {value!r:.40}") from None


def fact_fields(catalog: Catalog) -> dict[str, dict[str, FieldType]]:
    """entity type -> fact predicate -> field type."""
    return {
        name: {f.fact: f.type for f in spec.fields.values() if f.fact is not None}
        for name, spec in catalog.entities.items()
    }


def _check_tenant(tenant: str, only: str | None) -> None:
    if tenant != tenant.strip() or any(ord(c) < 32 or ord(c) == 127 for c in tenant):
        raise ValueError("tenant_id has surrounding blanks or control characters")
    if only is not None and tenant != only:
        raise ValueError(f"tenant_id {tenant!r} is not {only!r}, the tenant this load is for")


def _check_names(facts: Mapping[str, Mapping[str, FieldType]], entity: str, predicate: str) -> None:
    if entity not in facts:
        known = ", ".join(sorted(facts)) or "none"
        raise ValueError(f"entity_type {entity!r} is not in the catalog (known: {known})")
    if predicate not in facts[entity]:
        known = ", ".join(sorted(facts[entity])) or "none"
        raise ValueError(
            f"predicate {predicate!r} is not a fact field of {entity} (fact fields: {known})"
        )


def _check_indexable(tenant: str, entity: str, predicate: str, norm: str, max_item: int) -> None:
    # UTF-8 takes at most 4 bytes a character: most values need no encoding here
    if 4 * (len(tenant) + len(entity) + len(predicate) + len(norm)) + 32 <= max_item:
        return
    if index_entry_bytes((tenant, entity, predicate, norm)) <= max_item:
        return
    size = len(norm.encode("utf-8"))
    room = value_room((tenant, entity, predicate), max_item)
    raise ValueError(
        f"value_text is too long to index: normalized it is {size:,} bytes of UTF-8, and the "
        f"facts lookup index holds at most {room:,} with this tenant, entity type and predicate"
    )


def validate_row(
    raw: Mapping[str, Any],
    facts: Mapping[str, Mapping[str, FieldType]],
    *,
    tenant: str | None = None,
    max_index_item: int | None = None,
) -> dict[str, Any]:
    """The staged row for `raw`, or ValueError saying what is wrong with it.

    `facts` is entity type -> fact predicate -> field type (`fact_fields`).
    `tenant`: the only tenant the row may be of. `max_index_item`: the largest
    B-tree entry of the database (facts.index_bounds; default 8 KB blocks).
    """
    unknown = sorted(k for k in raw if k not in FACT_KEYS and k not in RECOMPUTED)
    if unknown:
        names = ", ".join(_shown(str(k)) for k in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise ValueError(f"unknown field(s) {names}{more}; a fact has {', '.join(FACT_KEYS)}")
    tenant_id, entity, entity_id, predicate, value_text = (
        _text(raw, k, required=True) or "" for k in REQUIRED
    )
    _check_tenant(tenant_id, tenant)
    _check_names(facts, entity, predicate)
    value_norm = normalize_text(value_text)
    if not value_norm:
        raise ValueError("value_text is blank after normalization")
    max_item = btree_max_item() if max_index_item is None else max_index_item
    _check_indexable(tenant_id, entity, predicate, value_norm, max_item)
    value_num = _number(raw, "value_num")
    if value_num is None and facts[entity][predicate] is FieldType.NUMBER:
        try:
            value_num = _number({"value_text": value_text}, "value_text")
        except ValueError:
            raise ValueError(f"{predicate} is a number fact: value_num is missing") from None
    confidence = _number(raw, "confidence")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError("confidence must lie between 0 and 1")
    observed_at, valid_until = _instant(raw, "observed_at"), _instant(raw, "valid_until")
    if observed_at is not None and valid_until is not None and valid_until < observed_at:
        raise ValueError("valid_until is before observed_at")
    return {
        "tenant_id": tenant_id,
        "entity_type": entity,
        "entity_id": entity_id,
        "predicate": predicate,
        "value_text": value_text,
        "value_norm": value_norm,
        "value_num": value_num,
        "source_type": _text(raw, "source_type", required=False) or DEFAULT_SOURCE_TYPE,
        "source_ref": _text(raw, "source_ref", required=False),
        "confidence": confidence,
        "observed_at": observed_at,
        "valid_until": valid_until,
    }
