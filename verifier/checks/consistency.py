"""consistent_with_result: the answer's numbers and ids are the result's own.

Catches an answer written elsewhere that says "yes" over an empty result, a
count that is not the executed count, or an item this execution never read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from qdsl.dsl.ir import AnswerContract
from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.checks.counts import match_count
from qdsl.verifier.model import Issue

NAME = "consistent_with_result"


def _ids(entries: Any) -> list[str]:
    if not isinstance(entries, list):
        return []
    return [str(e["id"]) for e in entries if isinstance(e, Mapping) and "id" in e]


def consistent_with_result(s: Subject) -> Iterator[Issue]:
    data, contract = s.answer.data, s.answer.contract
    matched = match_count(s)
    row_ids = {r.entity_id for r in s.result.rows}
    if contract is AnswerContract.COUNT_SCALAR and "count" in data and data["count"] != matched:
        yield error(NAME, f"data.count is {data['count']!r}, the execution counted {matched}")
    exists = data.get("exists")
    if contract is AnswerContract.YES_NO_WITH_EVIDENCE and bool(exists) != (matched > 0):
        yield error(NAME, f"data.exists is {exists!r} but the execution matched {matched}")
    total = data.get("total")
    if contract is AnswerContract.ENTITY_LIST and total not in (None, matched):
        yield error(NAME, f"data.total is {total!r}, the execution found {matched}")
    listed = _ids(data.get("matches")) + _ids(data.get("items")) + _ids(data.get("subjects"))
    entity = data.get("entity")
    if isinstance(entity, Mapping) and "id" in entity:
        listed.append(str(entity["id"]))
    for eid in listed:
        if eid not in row_ids:
            yield error(NAME, f"the answer names {s.plan.entity_type} {eid}, not in this result")
