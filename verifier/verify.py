"""verify(): run the plan's checks over one answer and aggregate a verdict.

What runs is the plan's `verifier_checks` (its query type's defaults when it
names none) plus the checks no plan can remove (`dsl.kinds.MANDATORY_CHECKS`,
the query type's own, fresh_evidence under require_fresh_fact, within_scope
under a project scope), then the
caller's extra checks. A plan normalized by `dsl.normalize` already lists all
of them; a plan built by hand gets the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from qdsl.dsl.ir import Plan, QueryType
from qdsl.dsl.kinds import VerifierCheck, kind_of
from qdsl.executor.result import ExecutionResult
from qdsl.verifier.checks import CHECKS, Check, Subject
from qdsl.verifier.model import OUTCOME_RANK, Answer, Issue, Outcome, Verdict, VerifyContext


def check_name(check: Check) -> str:
    return getattr(check, "__name__", type(check).__name__)


def checks_for(plan: Plan, extra: Sequence[Check] = ()) -> tuple[Check, ...]:
    """The checks `verify` runs for `plan`, in order, each once (by name)."""
    return tuple(check for _name, check in _named_checks(plan, extra))


@lru_cache(maxsize=256)
def _plan_checks(
    query_type: QueryType, named: tuple[VerifierCheck, ...], fresh: bool, scoped: bool
) -> tuple[tuple[str, Check], ...]:
    # A plan's checks follow from these alone (kinds and CHECKS are fixed at
    # import): worked out once, not per answer.
    names = kind_of(query_type).checks_for(named, fresh=fresh, scoped=scoped)
    return tuple({check_name(CHECKS[n]): CHECKS[n] for n in names}.items())


def _named_checks(plan: Plan, extra: Sequence[Check]) -> tuple[tuple[str, Check], ...]:
    base = _plan_checks(
        plan.query_type,
        plan.verifier_checks,
        plan.retrieval_policy.require_fresh_fact,
        plan.scope.project_id is not None,
    )
    if not extra:
        return base
    chosen = dict(base)
    for check in extra:
        chosen.setdefault(check_name(check), check)
    return tuple(chosen.items())


def _run_one(name: str, check: Check, subject: Subject) -> list[Issue]:
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
    named = _named_checks(plan, checks)
    subject = Subject(plan=plan, result=result, answer=answer, context=context)
    issues: list[Issue] = []
    passed: list[str] = []
    failed: list[str] = []
    skipped: list[str] = []
    for name, check in named:
        found = _run_one(name, check, subject)
        # "did not run" is the check's verdict on itself, not an issue of the answer
        issues.extend(i for i in found if i.level != "skipped")
        if any(i.level == "error" for i in found):
            failed.append(name)
        elif any(i.level == "skipped" for i in found):
            skipped.append(name)
        else:
            passed.append(name)
    outcome = Outcome.PASS
    for issue in issues:
        if issue.level == "error" and OUTCOME_RANK[issue.outcome] > OUTCOME_RANK[outcome]:
            outcome = issue.outcome
    return Verdict(
        outcome=outcome,
        checks_run=tuple(name for name, _check in named if name not in skipped),
        passed=tuple(passed),
        failed=tuple(failed),
        issues=tuple(issues),
        skipped=tuple(skipped),
    )
