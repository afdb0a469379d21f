"""within_limit: the answer lists no more than the plan's limit, and says when it cut."""

from __future__ import annotations

from collections.abc import Iterator

from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue

NAME = "within_limit"

_LISTS = ("items", "matches", "subjects", "passages", "findings")


def within_limit(s: Subject) -> Iterator[Issue]:
    limit = s.plan.limit
    data = s.answer.data
    if limit is not None:
        if len(s.result.rows) > limit:
            yield error(NAME, f"the result holds {len(s.result.rows)} rows, over the limit {limit}")
        for key in _LISTS:
            value = data.get(key)
            if isinstance(value, list) and len(value) > limit:
                yield error(NAME, f"data.{key} lists {len(value)}, over the limit {limit}")
    items, total = data.get("items"), data.get("total")
    if (
        isinstance(items, list)
        and isinstance(total, int)
        and total > len(items)
        and data.get("truncated") is not True
    ):
        yield error(NAME, f"data lists {len(items)} of {total} but does not say it is truncated")
