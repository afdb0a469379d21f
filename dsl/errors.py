"""One error root for every qdsl package.

Each error carries ``type`` and ``subtype`` (together the stable ``code``,
e.g. ``validation/unknown_field``), a message, a hint saying what to do, and
whether retrying the same call can help. The CLI maps ``type`` to an exit
code (docs/cli.md); callers of the Python API branch on ``code``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class ErrorType(StrEnum):
    USAGE = "usage"
    VALIDATION = "validation"
    NOT_COVERED = "not_covered"
    VERIFICATION = "verification"
    POLICY = "policy"
    REF = "ref"
    DATABASE = "database"
    INTERNAL = "internal"


EXIT_CODES: dict[ErrorType, int] = {
    ErrorType.INTERNAL: 1,
    ErrorType.USAGE: 2,
    ErrorType.VALIDATION: 3,
    ErrorType.NOT_COVERED: 4,
    ErrorType.VERIFICATION: 5,
    ErrorType.POLICY: 6,
    ErrorType.REF: 7,
    ErrorType.DATABASE: 8,
}


class QdslError(Exception):
    """Root of every error qdsl raises on purpose."""

    type: ClassVar[ErrorType] = ErrorType.INTERNAL
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        subtype: str,
        message: str,
        *,
        hint: str | None = None,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.subtype = subtype
        self.message = message
        self.hint = hint
        self.retryable = self.default_retryable if retryable is None else retryable
        self.details: dict[str, Any] = dict(details or {})
        # The trace id of the audit line that recorded this error (qdsl.audit), which
        # its error envelope carries as `meta.traceId`; None until it is audited.
        self.trace_id: str | None = None

    @property
    def code(self) -> str:
        return f"{self.type.value}/{self.subtype}"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.type]

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type.value,
            "subtype": self.subtype,
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "hint": self.hint,
            "details": self.details,
        }

    def __str__(self) -> str:
        text = f"{self.code}: {self.message}"
        excerpt = self.details.get("excerpt")
        if isinstance(excerpt, str) and excerpt:
            text += "\n" + excerpt
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.subtype!r}, {self.message!r})"


class UserError(QdslError):
    """The caller's input is wrong; the caller can fix it."""


class InternalError(QdslError):
    """A defect in qdsl itself; never the caller's fault."""

    type = ErrorType.INTERNAL


class UsageError(UserError):
    type = ErrorType.USAGE


class PlanError(UserError):
    """A plan (text or JSON) or a catalog that does not validate."""

    type = ErrorType.VALIDATION


class NotCoveredError(UserError):
    type = ErrorType.NOT_COVERED


class VerificationError(UserError):
    type = ErrorType.VERIFICATION


class PolicyError(UserError):
    type = ErrorType.POLICY


class RefError(UserError):
    type = ErrorType.REF


class DatabaseError(QdslError):
    type = ErrorType.DATABASE
    default_retryable = True
