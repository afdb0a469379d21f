"""consistent_with_result: the answer's numbers, ids and fact values are the result's own.

Catches an answer written elsewhere that says "yes" over an empty result, a
count that is not the executed count, an item this execution never read, or
a fact's values other than the ones read: a snapshot, finding or compare
stating a value no fact of this run holds, or leaving out one it read (a
many-valued fact is stated whole, or cut at the executor's bound as read).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.kinds import kind_for_contract
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.checks.counts import match_count
from qdsl.verifier.model import Issue

NAME = "consistent_with_result"


def _ids(entries: Any) -> list[str]:
    if not isinstance(entries, list):
        return []
    return [str(e["id"]) for e in entries if isinstance(e, Mapping) and "id" in e]


@dataclass(frozen=True)
class _Agreement:
    """What a kind's consistency rule reads (`dsl.kinds.hooks.ConsistencyContext`)."""

    data: Mapping[str, Any]
    matched: int
    result: ExecutionResult


def consistent_with_result(s: Subject) -> Iterator[Issue]:
    data, contract = s.answer.data, s.answer.contract
    matched = match_count(s)
    row_ids = {r.entity_id for r in s.result.rows}
    rule = kind_for_contract(contract).consistent
    if rule is not None:
        # the answer's kind says what its data must agree with (`dsl.kinds`)
        for message in rule(_Agreement(data, matched, s.result)):
            yield error(NAME, message)
    listed = _ids(data.get("matches")) + _ids(data.get("items")) + _ids(data.get("subjects"))
    entity = data.get("entity")
    if isinstance(entity, Mapping) and "id" in entity:
        listed.append(str(entity["id"]))
    for eid in listed:
        if eid not in row_ids:
            yield error(NAME, f"the answer names {s.plan.entity_type} {eid}, not in this result")
    yield from _stated_facts(s)


def _as_set(values: Any) -> frozenset[str] | None:
    if isinstance(values, list | tuple):
        return frozenset(str(v) for v in values)
    return None


def _read_facts(entity: EntitySpec | None, row: ResultRow, name: str) -> tuple[str, ...] | None:
    """What `row` holds for the fact field or predicate `name` (None: not a fact it read)."""
    spec = entity.fields.get(name) if entity is not None else None
    predicate = spec.fact if spec is not None and spec.fact is not None else name
    found = row.facts.get(predicate)
    if found is None and isinstance(row.values.get(name), tuple):
        found = row.values[name]
    return found


def _stated_facts(s: Subject) -> Iterator[Issue]:
    data = s.answer.data
    rows = {r.entity_id: r for r in s.result.rows}
    entity = s.context.catalog.entities.get(s.plan.entity_type)
    stated: list[tuple[str, str, Any]] = []  # (subject id, field or predicate, values)
    objects = [data.get("entity"), *(data.get("findings") or [])]
    for obj in objects:
        if isinstance(obj, Mapping) and isinstance(obj.get("facts"), Mapping):
            stated += [(str(obj.get("id")), k, v) for k, v in obj["facts"].items()]
    facts = {n for n, f in entity.fields.items() if f.is_fact} if entity is not None else set()
    for item in data.get("items") or []:
        if isinstance(item, Mapping):
            stated += [(str(item.get("id")), k, v) for k, v in item.items() if k in facts]
    for diff in data.get("differences") or []:
        if isinstance(diff, Mapping) and "only" in diff and isinstance(diff.get("values"), Mapping):
            stated += [(str(i), str(diff.get("field")), v) for i, v in diff["values"].items()]
    for subject, name, values in stated:
        row = rows.get(subject)
        shown = _as_set(values)
        if row is None or shown is None:
            continue  # an id not in the result is reported above
        read = _read_facts(entity, row, name)
        if read is None:
            if shown:
                yield error(NAME, f"the answer states {name} of {subject}, no fact read holds it")
        elif shown != frozenset(read):
            yield error(
                NAME,
                f"the answer states {name} of {subject} as {sorted(shown)}, "
                f"the execution read {sorted(read)}",
            )
