"""verify(): run every check over one answer and aggregate a verdict."""

from __future__ import annotations

from collections.abc import Sequence

from qdsl.dsl.ir import Plan
from qdsl.executor.result import ExecutionResult
from qdsl.verifier.checks import DEFAULT_CHECKS, Check, Subject
from qdsl.verifier.model import OUTCOME_RANK, Answer, Issue, Outcome, Verdict, VerifyContext


def check_name(check: Check) -> str:
    return getattr(check, "__name__", type(check).__name__)


def _run_one(check: Check, subject: Subject) -> list[Issue]:
    name = check_name(check)
    try:
        return list(check(subject))
    except Exception as exc:
        # A broken check must not let an answer through, nor crash the caller.
        return [
            Issue(
                check=name,
                level="error",
                message=f"check crashed: {type(exc).__name__}: {exc}",
                outcome=Outcome.RETRY_WITH_SAME_PLAN,
            )
        ]


def verify(
    plan: Plan,
    result: ExecutionResult,
    answer: Answer,
    *,
    context: VerifyContext,
    checks: Sequence[Check] = DEFAULT_CHECKS,
) -> Verdict:
    subject = Subject(plan=plan, result=result, answer=answer, context=context)
    issues: list[Issue] = []
    passed: list[str] = []
    failed: list[str] = []
    for check in checks:
        found = _run_one(check, subject)
        issues.extend(found)
        name = check_name(check)
        (failed if any(i.level == "error" for i in found) else passed).append(name)
    outcome = Outcome.PASS
    for issue in issues:
        if issue.level == "error" and OUTCOME_RANK[issue.outcome] > OUTCOME_RANK[outcome]:
            outcome = issue.outcome
    return Verdict(
        outcome=outcome,
        checks_run=tuple(check_name(c) for c in checks),
        passed=tuple(passed),
        failed=tuple(failed),
        issues=tuple(issues),
    )
