"""The answer verifier: nothing leaves unless it answers the question asked.

`verify(plan, result, answer, context=...)` runs the plan's checks plus the
mandatory ones (and any the caller adds) and returns a `Verdict` naming every
failed check. It judges any answer, the renderer's or one written elsewhere,
against this execution.
"""

from __future__ import annotations

from qdsl.verifier.checks import CHECKS, Check, Subject
from qdsl.verifier.model import Answer, Issue, Language, Outcome, Verdict, VerifyContext
from qdsl.verifier.verify import checks_for, verify

__all__ = [
    "CHECKS",
    "Answer",
    "Check",
    "Issue",
    "Language",
    "Outcome",
    "Subject",
    "Verdict",
    "VerifyContext",
    "checks_for",
    "verify",
]
