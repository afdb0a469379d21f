"""Evaluate question cases: does each answer that leaves say what the data says?

Analysts keep a file of cases (TOML or JSON Lines): a question, the tenant,
optionally the clock (`now`), and what the answer must be. `run_cases` asks
every question through `plan_and_answer` and judges each result:

* **right**: answered, and every expectation holds; or an abstention the case
  lists as right (`status = "clarify"` for words no catalog maps) whose text
  names every `mentions` entry;
* **safe**: any other abstention (clarify, insufficient_evidence, not_covered,
  gated, refused): nothing wrong left;
* **wrong**: an answer left that contradicts an expectation, or an answer left
  where the case expects only abstentions.

The score is TrustSQL's reliability (arXiv 2403.15879): +1 per right case,
0 per abstention, −c per wrong one, reported per case (divided by N) for
c = 0, 10 and N, the number of cases. At c = N one wrong answer outweighs
every right one: a planner that guesses scores below one that abstains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from qdsl.dsl.errors import DatabaseError, QdslError, UsageError
from qdsl.dsl.settings.limits import Limits, check_text_size, limits

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from qdsl.dsl.catalog import Catalog
    from qdsl.pipeline import AnswerResult
    from qdsl.planner import Planner

Verdict = Literal["right", "safe", "wrong"]
ABSTENTIONS: frozenset[str] = frozenset(
    {"clarify", "insufficient_evidence", "not_covered", "gated", "refused"}
)
STATUSES: frozenset[str] = ABSTENTIONS | {"answered"}


class Expect(BaseModel):
    """What the answer to a case must be; every given key is checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # the outcome(s) that count as right: "answered" checks every other key; an
    # abstention listed here is right when the text names every `mentions` entry
    status: tuple[str, ...] = ("answered",)
    contract: str | None = None
    exists: bool | None = None
    # count_scalar: the count; entity_list: the total
    count: int | None = Field(default=None, ge=0)
    # the ids the answer names (matches, items, the entity, subjects, passages), as a set
    ids: tuple[str, ...] | None = None
    # values of the answered entity's fields (entity_snapshot), e.g. {priority = "urgent"}
    fields: dict[str, str | int | float | bool | None] | None = None
    # text the answer must contain (case-insensitive)
    mentions: tuple[str, ...] = ()
    # aggregate_with_basis: the value; breakdown_table: every group's key -> its value
    # (a group's keys joined by " / " when it is grouped by two)
    value: float | None = None
    groups: dict[str, float] | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _statuses(cls, value: Any) -> Any:
        values = (value,) if isinstance(value, str) else tuple(value)
        unknown = [v for v in values if v not in STATUSES]
        if unknown or not values:
            raise ValueError(f"status must be one or more of {sorted(STATUSES)}")
        return values

    @field_validator("ids", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(str(v) for v in value)
        return value


class Case(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    tenant: str = Field(min_length=1)
    now: datetime | None = None
    expect: Expect = Expect()

    @field_validator("now")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


@dataclass(frozen=True)
class CaseResult:
    case: Case
    verdict: Verdict
    status: str
    text: str
    reasons: tuple[str, ...] = ()
    trace_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "question": self.case.question,
            "tenant": self.case.tenant,
            "verdict": self.verdict,
            "expected": list(self.case.expect.status),
            "status": self.status,
            "text": self.text,
            "reasons": list(self.reasons),
            "trace_id": self.trace_id,
        }


@dataclass(frozen=True)
class Report:
    results: tuple[CaseResult, ...]

    def tally(self, verdict: Verdict) -> int:
        return sum(r.verdict == verdict for r in self.results)

    def reliability(self, penalty: float) -> float:
        """TrustSQL reliability per case: (right − penalty · wrong) / N."""
        n = len(self.results)
        if n == 0:
            return 0.0
        return (self.tally("right") - penalty * self.tally("wrong")) / n

    def penalties(self) -> dict[str, float]:
        n = len(self.results)
        return {"0": 0.0, "10": 10.0, "N": float(n)}

    def to_dict(self) -> dict[str, Any]:
        n = len(self.results)
        return {
            "cases": n,
            "right": self.tally("right"),
            "safe": self.tally("safe"),
            "wrong": self.tally("wrong"),
            "right_rate": round(self.tally("right") / n, 4) if n else 0.0,
            "reliability": {
                f"c={name}": round(self.reliability(c), 4) for name, c in self.penalties().items()
            },
            "results": [r.to_dict() for r in self.results],
        }


# -- loading -------------------------------------------------------------------------


def _problems(exc: ValidationError, where: str) -> list[str]:
    return [f"{where}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]


def cases_from_records(records: Sequence[Mapping[str, Any]], source: str) -> tuple[Case, ...]:
    """Validate raw case records; every problem of the file is reported at once."""
    cases: list[Case] = []
    problems: list[str] = []
    for i, raw in enumerate(records):
        record = {"id": f"{source}#{i + 1}", **raw}
        try:
            cases.append(Case.model_validate(record))
        except ValidationError as exc:
            problems.extend(_problems(exc, f"case[{i}]"))
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            problems.append(f"case id `{case.id}` is used twice")
        seen.add(case.id)
    if problems:
        raise UsageError(
            "invalid_cases",
            f"{source}: {len(problems)} problem(s) in the case file",
            hint="each case needs question and tenant; expect takes status, contract, "
            "exists, count, ids, fields, mentions, value, groups",
            details={"problems": problems[:50]},
        )
    return tuple(cases)


def check_questions(cases: Sequence[Case], source: str, limit: Limits | None = None) -> None:
    """Refuse a question over `[limits] input_bytes`, or questions over it together.

    The limit the MCP server puts on one question; together, because `[defaults]`
    may give every case of a file the same long question, and each is asked.
    """
    lim = limit or limits()
    total = 0
    for case in cases:
        check_text_size(case.question, "input_bytes", f"the question of case `{case.id}`", lim)
        total += len(case.question.encode("utf-8"))
        if total > lim.input_bytes:
            what = f"the questions of {source} together"
            raise lim.too_large("input_bytes", what, total, "bytes")


def load_cases(path: str | Path) -> tuple[Case, ...]:
    """Cases from a `.toml` file ([defaults] + [[case]]) or JSON Lines (one case a line),
    read within the input limits (qdsl.eval_files)."""
    from qdsl.eval_files import read_case_records

    records, source = read_case_records(path)
    cases = cases_from_records(records, source)
    check_questions(cases, source)
    return cases


# -- judging -------------------------------------------------------------------------


def _answer_ids(contract: str | None, data: Mapping[str, Any]) -> list[str] | None:
    rows: Any
    if contract == "entity_snapshot":
        entity = data.get("entity")
        rows = [entity] if isinstance(entity, dict) else []
    else:
        key = {
            "yes_no_with_evidence": "matches",
            "entity_list": "items",
            "comparison_with_basis": "subjects",
            "explanation_with_citations": "passages",
            "diagnosis_with_evidence": "findings",
        }.get(contract or "")
        if key is None:
            return None
        rows = data.get(key) or []
    return [str(r.get("id")) for r in rows if isinstance(r, dict)]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _same(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, bool) or isinstance(found, bool):
        return found is wanted
    if isinstance(wanted, int | float) and isinstance(found, int | float):
        return math.isclose(float(found), float(wanted), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(wanted, str) and isinstance(found, str):
        return found.casefold() == wanted.casefold()
    return bool(found == wanted)


def _check_ids(
    expect: Expect, contract: str | None, data: Mapping[str, Any], limit: int | None
) -> list[str]:
    assert expect.ids is not None
    found = _answer_ids(contract, data)
    if found is None:
        return [f"a {contract} answer names no ids"]
    wanted = set(expect.ids)
    truncated = bool(data.get("truncated")) or (
        contract == "yes_no_with_evidence" and limit is not None and len(found) >= limit
    )
    extra = sorted(set(found) - wanted)
    if extra:
        return [f"names {extra}, not expected"]
    missing = sorted(wanted - set(found))
    if missing and not truncated:
        return [f"misses {missing}"]
    return []


def _check_answer(expect: Expect, result: AnswerResult) -> list[str]:
    contract = result.answer_contract.value if result.answer_contract else None
    data: Mapping[str, Any] = result.data or {}
    reasons: list[str] = []
    if expect.contract is not None and contract != expect.contract:
        reasons.append(f"contract {contract}, expected {expect.contract}")
    if expect.exists is not None and data.get("exists") is not expect.exists:
        reasons.append(f"exists {data.get('exists')}, expected {expect.exists}")
    if expect.count is not None:
        found = data.get("count", data.get("total"))
        if found != expect.count:
            reasons.append(f"count {found}, expected {expect.count}")
    if expect.ids is not None:
        limit = result.plan.limit if result.plan is not None else None
        reasons.extend(_check_ids(expect, contract, data, limit))
    if expect.fields is not None:
        entity = _mapping(data.get("entity"))
        facts = _mapping(entity.get("facts"))
        for name, wanted in expect.fields.items():
            found = entity.get(name, facts.get(name))
            if not _same(found, wanted):
                reasons.append(f"{name} = {found!r}, expected {wanted!r}")
    reasons.extend(_check_values(expect, data))
    reasons.extend(_mentions(expect, result.text or ""))
    return reasons


def _check_values(expect: Expect, data: Mapping[str, Any]) -> list[str]:
    reasons: list[str] = []
    if expect.value is not None and not _same(data.get("value"), expect.value):
        reasons.append(f"value {data.get('value')!r}, expected {expect.value!r}")
    if expect.groups is not None:
        found = _groups(data.get("groups"))
        if found is None:
            return [*reasons, "the answer has no groups"]
        for key in sorted(set(found) - set(expect.groups)):
            reasons.append(f"group {key!r} not expected")
        for key, wanted in expect.groups.items():
            if key not in found:
                reasons.append(f"misses group {key!r}")
            elif not _same(found[key], wanted):
                reasons.append(f"group {key!r} = {found[key]!r}, expected {wanted!r}")
    return reasons


def _groups(rows: Any) -> dict[str, Any] | None:
    """A breakdown's groups as key -> value (keys of two groupings joined by " / ")."""
    if not isinstance(rows, list):
        return None
    out: dict[str, Any] = {}
    for row in rows:
        if not isinstance(row, dict):
            return None
        keys = row.get("keys", row.get("key"))
        parts = keys if isinstance(keys, list | tuple) else [keys]
        # a group of a related object is named by its label where the answer gives one
        labels = row.get("labels")
        if isinstance(labels, list) and len(labels) == len(parts):
            parts = [k if label is None else label for k, label in zip(parts, labels, strict=True)]
        out[" / ".join(str(k) for k in parts)] = row.get("value")
    return out


def _mentions(expect: Expect, text: str) -> list[str]:
    folded = text.casefold()
    return [f"does not mention {m!r}" for m in expect.mentions if m.casefold() not in folded]


def judge(case: Case, result: AnswerResult) -> CaseResult:
    """Right, safe or wrong: `result` is the AnswerResult for `case`."""
    status = str(result.status)
    expect = case.expect
    wanted = " or ".join(expect.status)

    def done(verdict: Verdict, *reasons: str) -> CaseResult:
        return CaseResult(case, verdict, status, result.text or "", reasons, result.trace_id)

    if status in ABSTENTIONS:
        if status not in expect.status:
            return done("safe", f"abstained ({status}), expected {wanted}")
        missing = _mentions(expect, result.text or "")
        return done("safe", *missing) if missing else done("right")
    if "answered" not in expect.status:
        return done("wrong", f"answered, expected {wanted}")
    reasons = _check_answer(expect, result)
    return done("wrong", *reasons) if reasons else done("right")


# -- running -------------------------------------------------------------------------


Ask = Callable[[Case], "AnswerResult"]


def run_cases(cases: Sequence[Case], ask: Ask) -> Report:
    """Judge every case; `ask(case)` returns its AnswerResult.

    A database error stops the run (no case can be judged against a database
    that is not there); any other failure of one case is recorded as wrong,
    with its error, so a crash on one question is never mistaken for a pass.
    """
    results: list[CaseResult] = []
    for case in cases:
        try:
            result = ask(case)
        except DatabaseError:
            raise
        except QdslError as exc:
            results.append(CaseResult(case, "wrong", "error", "", (f"qdsl failed: {exc}",)))
            continue
        except Exception as exc:
            reason = f"qdsl failed unexpectedly: {type(exc).__name__}: {exc}"
            results.append(CaseResult(case, "wrong", "error", "", (reason[:300],)))
            continue
        results.append(judge(case, result))
    return Report(tuple(results))


def plan_and_answer_asker(
    *,
    engine: Engine | None,
    catalog: Catalog,
    default_now: datetime,
    planner: Planner | None = None,
) -> Ask:
    """`ask` for `run_cases`: the whole pipeline, each case on its own clock.

    Names only the data knows are linked as a deployment links them: through
    the value index of `engine` (the embedded demo database without one), read
    per asking tenant and cached across the cases.
    """
    from qdsl.api import AnswerOptions, demo_engine, plan_and_answer
    from qdsl.facts.value_index import value_source_for

    eng = engine if engine is not None else demo_engine()
    values = value_source_for(eng, catalog)

    def ask(case: Case) -> AnswerResult:
        options = AnswerOptions(
            catalog=catalog, planner=planner, now=case.now or default_now, values=values
        )
        return plan_and_answer(case.question, case.tenant, engine=eng, options=options)

    return ask
