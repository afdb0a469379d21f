"""fresh_evidence: with require_fresh_fact, every cited fact is still valid.

Stale means past its `valid_until`, or observed longer ago than the freshness
window (the plan's `freshness_days`, else the context's default).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from qdsl.dsl.freshness import stale_reason
from qdsl.executor.result import Evidence
from qdsl.verifier.checks.base import Subject, error, warning
from qdsl.verifier.model import Issue, Outcome

NAME = "fresh_evidence"


def staleness(ev: Evidence, now: datetime, days: int | None) -> str | None:
    """Why `ev` is stale at `now`, or None when it is fresh."""
    return stale_reason(
        valid_until=ev.valid_until, observed_at=ev.observed_at, now=now, window_days=days
    )


def fresh_evidence(s: Subject) -> Iterator[Issue]:
    policy = s.plan.retrieval_policy
    now = s.context.now
    days = policy.freshness_days or s.context.default_freshness_days
    known = s.result.evidence_by_id()
    for eid in s.answer.cited_evidence:
        ev = known.get(eid)
        if ev is None or ev.kind != "fact":
            continue
        why = staleness(ev, now, days)
        if why is None:
            continue
        if policy.require_fresh_fact:
            yield error(
                NAME,
                f"cited fact {eid} is stale ({why}) and the plan requires fresh facts",
                Outcome.EXPLICIT_INSUFFICIENT_EVIDENCE,
            )
        else:
            yield warning(NAME, f"cited fact {eid} is stale ({why})")
