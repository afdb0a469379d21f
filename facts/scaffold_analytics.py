"""What `catalog init` drafts beyond fields: relations, aggregations, grains, counts.

Guesses, to be reviewed like every other draft key:

* a relation for each id field that `references` another entity (from a
  foreign key, or a `<x>_id` column naming a drafted entity), named after the
  column without `_id` (`customer_id` -> `customer`), its inverse named after
  the source entity in the plural (`orders`), or `<plural>_by_<relation>` when
  two relations would give the target the same inverse name; a foreign key
  that points at a column other than the target's id drafts none (a note says so);
* `aggregations = ["sum", "avg", "min", "max"]` on number columns that are not
  keys or codes by their name (`*_no`, `zip`, `year`, ...);
* `grains` on date and datetime columns; a `count` measure per entity.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Engine, inspect

from qdsl.dsl.catalog import FieldType

AGGREGATIONS = ["sum", "avg", "min", "max"]
GRAINS = ["day", "week", "month", "quarter", "year"]
# Number columns that identify or code rather than measure.
NOT_A_MEASURE = re.compile(
    r"(^|_)(id|ids|no|nr|num|number|code|zip|postal|postcode|phone|year|version|seq|"
    r"sequence|rank|position|ordinal|sort|level)($|_)",
    re.I,
)
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def plural(name: str) -> str:
    if name.endswith("y") and not name.endswith(("ay", "ey", "oy", "uy")):
        return name[:-1] + "ies"
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def add_measures(entities: dict[str, dict[str, Any]], notes: list[str]) -> None:
    """Aggregations on measure-like number fields, grains on times, a count per entity."""
    for name, entity in entities.items():
        for fname, spec in entity["fields"].items():
            if spec.get("sensitive"):
                continue
            kind = spec["type"]
            if kind == FieldType.NUMBER.value and not NOT_A_MEASURE.search(fname):
                spec["aggregations"] = list(AGGREGATIONS)
                notes.append(
                    f"{entity['table']}.{fname}: aggregations {', '.join(AGGREGATIONS)}; "
                    "review (a sum of a price or a rate means nothing)"
                )
            elif kind in (FieldType.DATE.value, FieldType.DATETIME.value):
                spec["grains"] = list(GRAINS)
        count = f"{name}_count"
        if count not in entity["fields"]:
            entity.setdefault("measures", {})[count] = {"function": "count"}


def add_relations(engine: Engine, entities: dict[str, dict[str, Any]], notes: list[str]) -> None:
    """A many-to-one relation per id field with `references` (drafted beforehand)."""
    inspector = inspect(engine)
    taken: dict[str, set[str]] = {
        n: {*e["fields"], *e.get("relations", {}), *e.get("measures", {})}
        for n, e in entities.items()
    }
    for name, entity in entities.items():
        odd = _foreign_keys_off_the_id(inspector, entity, entities)
        for column, spec in entity["fields"].items():
            target = spec.get("references")
            if target is None or target not in entities:
                continue
            if column in odd:
                notes.append(
                    f"{entity['table']}.{column}: its foreign key points at "
                    f"{odd[column]!r}, not the id of {target}; no relation drafted"
                )
                continue
            rname = _free(column.lower().removesuffix("_id") or target, taken[name], target)
            inverse = _free(plural(name), taken[target], f"{plural(name)}_by_{rname}")
            if rname is None or inverse is None:
                notes.append(f"{entity['table']}.{column}: no free name for a relation; add one")
                continue
            taken[name].add(rname)
            taken[target].add(inverse)
            entity.setdefault("relations", {})[rname] = {
                "entity": target,
                "key": column,
                "inverse": inverse,
            }
            notes.append(
                f"{entity['table']}.{column}: relation {name}.{rname} -> {target} "
                f"(inverse {target}.{inverse}); review"
            )


def _free(wanted: str, taken: set[str], fallback: str) -> str | None:
    for candidate in (wanted, fallback):
        if _BARE.match(candidate) and candidate not in taken:
            return candidate
    return None


def _foreign_keys_off_the_id(
    inspector: Any, entity: dict[str, Any], entities: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """Column -> the referred column, for foreign keys that refer to a column other
    than the referred entity's id."""
    ids = {e["table"]: e["id"] for e in entities.values()}
    out: dict[str, str] = {}
    tenant = entity["tenant"]
    for fk in inspector.get_foreign_keys(entity["table"]):
        pairs = [
            (c, r)
            for c, r in zip(
                fk.get("constrained_columns") or [], fk.get("referred_columns") or [], strict=False
            )
            if c != tenant
        ]
        referred = str(fk.get("referred_table"))
        if len(pairs) == 1 and referred in ids and pairs[0][1] != ids[referred]:
            out[pairs[0][0]] = pairs[0][1]
    return out
