"""evidence_backed: every cited id was read by this very execution."""

from __future__ import annotations

import re
from collections.abc import Iterator

from qdsl.dsl.kinds import kind_for_contract
from qdsl.verifier.checks.base import Subject, error
from qdsl.verifier.model import Issue

NAME = "evidence_backed"

# Citations written inline, e.g. "[fact:12]" or "[doc:3, fact:7]".
_BRACKETS = re.compile(r"\[([^\[\]]{1,400})\]")
_ID = re.compile(r"^[A-Za-z_][\w-]*:[\w#.:-]+$")
_SEPARATORS = re.compile(r"[,，;；\s]+")


def inline_citations(text: str) -> list[str]:
    found: list[str] = []
    for group in _BRACKETS.findall(text):
        for part in _SEPARATORS.split(group):
            if _ID.match(part):
                found.append(part)
    return found


def _claims_something(s: Subject) -> bool:
    data = s.answer.data
    if "exists" in data:
        return bool(data.get("exists"))
    for key in ("entity", "passages", "findings", "subjects"):
        if key in data:
            return bool(data.get(key))
    return False


def evidence_backed(s: Subject) -> Iterator[Issue]:
    result = s.result
    known = result.evidence_by_id()
    cited = list(dict.fromkeys([*s.answer.cited_evidence, *inline_citations(s.answer.text)]))
    for eid in cited:
        ev = known.get(eid)
        if ev is None:
            yield error(
                NAME, f"cited evidence {eid} was not read by execution {result.execution_id}"
            )
        elif ev.execution_id != result.execution_id:
            yield error(
                NAME,
                f"cited evidence {eid} belongs to execution {ev.execution_id}, "
                f"not {result.execution_id}",
            )
    row_evidence = {eid for row in result.rows for eid in row.evidence_ids}
    for eid in sorted(row_evidence - set(known)):
        yield error(NAME, f"row evidence {eid} is missing from the result's evidence")
    if kind_for_contract(s.answer.contract).must_cite and _claims_something(s) and not cited:
        yield error(NAME, f"a {s.answer.contract.value} answer must cite evidence, none cited")
