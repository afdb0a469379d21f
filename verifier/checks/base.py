"""The shape every check has: a named function from a `Subject` to issues."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from qdsl.dsl.ir import Plan
from qdsl.executor.result import ExecutionResult
from qdsl.verifier.model import Answer, Issue, Outcome, VerifyContext


@dataclass(frozen=True)
class Subject:
    plan: Plan
    result: ExecutionResult
    answer: Answer
    context: VerifyContext


Check = Callable[[Subject], Iterable[Issue]]


def error(
    check: str,
    message: str,
    outcome: Outcome = Outcome.RETRY_WITH_SAME_PLAN,
    *,
    retryable: bool = True,
) -> Issue:
    return Issue(check=check, level="error", message=message, outcome=outcome, retryable=retryable)


def warning(check: str, message: str) -> Issue:
    return Issue(check=check, level="warning", message=message, outcome=Outcome.PASS)


def skipped(check: str, message: str) -> Issue:
    """The check did not run (nothing to check against): the verdict lists it
    under `skipped`, never under `passed`."""
    return Issue(check=check, level="skipped", message=message, outcome=Outcome.PASS)
