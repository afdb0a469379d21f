"""What a facts load reports: its counts, or the rows it refused and why.

`LoadReport` is a load that went through; `FactsRejected`
(`validation/facts_rejected`, exit 3) one that wrote nothing, naming the first
MAX_PROBLEMS_SHOWN bad rows by line and reason and counting all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qdsl.dsl.errors import ErrorType, UserError

__all__ = ["MAX_PROBLEMS_SHOWN", "FactsRejected", "LoadReport", "RowProblem", "rejected"]

MAX_PROBLEMS_SHOWN = 200


class FactsRejected(UserError):
    """Rows that do not validate; nothing was written."""

    type = ErrorType.VALIDATION


@dataclass(frozen=True)
class RowProblem:
    line: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason}


@dataclass
class LoadReport:
    rows: int = 0
    inserted: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    tenants: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "inserted": self.inserted,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "tenants": self.tenants,
            "seconds": round(self.seconds, 3),
        }


def rejected(problems: list[RowProblem], bad: int, rows: int) -> FactsRejected:
    first = problems[0]
    return FactsRejected(
        "facts_rejected",
        f"{bad} of {rows} row(s) are not valid facts (first: line {first.line}: "
        f"{first.reason}); nothing was loaded",
        hint="fix the rows named in details.problems and load the file again",
        details={
            "problems": [p.to_dict() for p in problems],
            "bad_rows": bad,
            "rows": rows,
            # shown under the message to a person (QdslError.__str__)
            "excerpt": "\n".join(f"  line {p.line}: {p.reason}" for p in problems[:10])
            + (f"\n  … and {bad - 10} more" if bad > 10 else ""),
        },
    )
