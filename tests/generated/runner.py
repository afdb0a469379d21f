"""Ask a generated deployment its questions and judge every answer.

`ask_all` runs each question through `qdsl.plan_and_answer` (the rule
planner) on the deployment's database, with the deployment's fixed `now` and
the tenant's value index as a deployment links names, and judges it against
the oracle. An exception is recorded as an ERROR verdict with its type, never
raised: one deployment's questions are all asked, so a run reports every
failure it met.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from generated.deployments import type_slot
from generated.judge import Verdict, judge
from generated.model import Deployment
from generated.oracle import expected
from generated.questions import Question
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.errors import QdslError
from qdsl.facts.value_index import value_source_for


@dataclass(frozen=True)
class Asked:
    question: Question
    verdict: Verdict
    status: str
    text: str

    def line(self) -> str:
        head = f"{self.verdict.outcome.upper()} {self.question!r}"
        return f"{head} -> {self.status}: {self.text[:160]!r} ({self.verdict.reason})"


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    # outcome per question shape (query type, condition kinds): what the run exercised
    by_shape: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[tuple[Deployment, Asked]] = field(default_factory=list)
    # (slot, SQL type) of every column the deployments asked about stored values in
    columns: set[tuple[str, str]] = field(default_factory=set)
    # answers across a relation judged RIGHT that a join forgetting the tenant on the
    # related table would have got wrong: the isolation cases were asked, and held
    isolating: int = 0

    @property
    def asked(self) -> int:
        return sum(self.outcomes.values())

    def add(self, dep: Deployment, done: Iterable[Asked]) -> None:
        for e in dep.entities:
            self.columns |= {("id", e.id_sql), ("text", e.label_sql)}
            self.columns |= {(type_slot(f.concept), f.sql) for f in e.fields if f.sql}
        for a in done:
            self.outcomes[a.verdict.outcome] += 1
            for tag in (f"qtype:{a.question.qtype}", *a.question.tags):
                self.by_shape[tag, a.verdict.outcome] += 1
            if a.verdict.outcome in ("wrong", "error"):
                self.failures.append((dep, a))
            if a.verdict.outcome == "right" and _tells_tenants_apart(dep, a.question):
                self.isolating += 1


def _tells_tenants_apart(dep: Deployment, q: Question) -> bool:
    if not any(c.field.count(".") for c in q.conds):
        return False
    careless = expected(dep, q, tenant_bound=False)
    return careless.definite != expected(dep, q).definite


def _error(exc: BaseException) -> Verdict:
    if isinstance(exc, QdslError):
        what = f"{exc.type.value}/{exc.subtype}: {exc}"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        where = (
            f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
        )
        what = f"{type(exc).__name__}{where}: {exc}"
    return Verdict("error", what[:400])


def ask_all(dep: Deployment, engine: Engine, questions: Iterable[Question]) -> list[Asked]:
    options = AnswerOptions(
        catalog=dep.catalog, now=dep.now, values=value_source_for(engine, dep.catalog)
    )
    done: list[Asked] = []
    for q in questions:
        try:
            res = plan_and_answer(q.text, q.tenant, engine=engine, options=options)
        except Exception as exc:
            done.append(Asked(q, _error(exc), "error", ""))
            continue
        done.append(Asked(q, judge(dep, q, res, expected(dep, q)), str(res.status), res.text or ""))
    return done
