"""verify(): run the plan's checks over one answer and aggregate a verdict.

What runs is the plan's `verifier_checks` (its query type's defaults when it
names none) plus the checks no plan can remove (`dsl.kinds.MANDATORY_CHECKS`,
the query type's own, fresh_evidence under require_fresh_fact), then the
caller's extra checks. A plan normalized by `dsl.normalize` already lists all
of them; a plan built by hand gets the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.executor.result import ExecutionResult
from qdsl.verifier.checks import CHECKS, Check, Subject
from qdsl.verifier.model import OUTCOME_RANK, Answer, Issue, Outcome, Verdict, VerifyContext


def check_name(check: Check) -> str:
    return getattr(check, "__name__", type(check).__name__)


def checks_for(plan: Plan, extra: Sequence[Check] = ()) -> tuple[Check, ...]:
    """The checks `verify` runs for `plan`, in order, each once (by name)."""
    kind = kind_of(plan.query_type)
    names = kind.checks_for(plan.verifier_checks, fresh=plan.retrieval_policy.require_fresh_fact)
    chosen = {check_name(CHECKS[n]): CHECKS[n] for n in names}
    for check in extra:
        chosen.setdefault(check_name(check), check)
    return tuple(chosen.values())


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
    checks: Sequence[Check] = (),
) -> Verdict:
    """Judge `answer`; `checks` are the caller's, added to the plan's and the mandatory ones."""
    checks = checks_for(plan, checks)
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
