"""The answer verifier: nothing leaves unless it answers the question asked.

`verify(plan, result, answer, context=...)` runs `DEFAULT_CHECKS` (or the
caller's tuple) and returns a `Verdict` naming every failed check. It judges
any answer, the renderer's or one written elsewhere, against this execution.
"""

from __future__ import annotations

from qdsl.verifier.checks import DEFAULT_CHECKS, Check, Subject
from qdsl.verifier.contracts import DATA_KEYS
from qdsl.verifier.model import Answer, Issue, Language, Outcome, Verdict, VerifyContext
from qdsl.verifier.verify import verify

__all__ = [
    "DATA_KEYS",
    "DEFAULT_CHECKS",
    "Answer",
    "Check",
    "Issue",
    "Language",
    "Outcome",
    "Subject",
    "Verdict",
    "VerifyContext",
    "verify",
]
