"""The executor's result-building steps as they were before rows were read from
the driver's tuples and results built without validation (`executor.flow` at
the time, verbatim but for this note, `split_rows`, copied in from
`executor.main_facts`, a large page's evidence read by id, and the rows' own
facts): the reference
`test_result_build` holds the new steps to, output for output.

The rows' own facts are written here as plainly as they can be: every value of
a fact predicate, one per alias group of its field (its canonical value) or per
`value_norm`, in the statement's order; how many distinct values a cut
predicate holds; and every fact read for a row as its evidence.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Generator
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from qdsl.dsl.catalog import FieldType
from qdsl.dsl.ir import Plan
from qdsl.executor import names as N
from qdsl.executor.compile import FACT_VALUES_CAP, Prepared, render
from qdsl.executor.main_facts import FACT_PREFIX, FILTER_COLUMN
from qdsl.executor.result import ExecutionResult
from qdsl.executor.statements import AnySelect

Row = dict[str, Any]
Request = tuple[str, AnySelect, dict[str, Any]]
Flow = Generator[Request, list[Row], ExecutionResult]


class _Known:
    """What a call works out from its Prepared alone, once per Prepared (a plan
    served again from the cache is the same object)."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.readers = _readers(prep)
        self.plan_hash = plan_hash(prep)
        self.retrieval = _retrieval(prep, False)
        self.tenant = str(prep.params[N.TENANT])
        self.fingerprints: dict[tuple[str, ...], tuple[str, ...]] = {}

    def fingerprints_of(self, roles: list[str]) -> tuple[str, ...]:
        key = tuple(roles)
        found = self.fingerprints.get(key)
        if found is None:
            found = self.fingerprints[key] = _fingerprints(self.prep, roles)
        return found


def _known(prep: Prepared) -> _Known:
    # keyed by id: the entry keeps its Prepared alive, so an id is never reused
    found = _KNOWN.get(id(prep))
    if found is not None and found.prep is prep:
        return found
    if len(_KNOWN) >= _HASHES_MAX:
        _KNOWN.clear()
    found = _KNOWN[id(prep)] = _Known(prep)
    return found


_KNOWN: dict[int, _Known] = {}


def plan_hash(prep: Prepared) -> str:
    # A plan served again from a cache is the same (immutable) object: hash it once.
    # The entry keeps its plan alive, so an id is never reused while it is cached.
    found = _HASHES.get(id(prep.plan))
    if found is not None and found[0] is prep.plan:
        return found[1]
    text = json.dumps(prep.plan.to_json_dict(), sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    if len(_HASHES) >= _HASHES_MAX:
        _HASHES.clear()
    _HASHES[id(prep.plan)] = (prep.plan, digest)
    return digest


_HASHES: dict[int, tuple[Plan, str]] = {}
_HASHES_MAX = 1024


def plain(value: Any) -> Any:
    """Values as JSON-ready data, the same on every dialect."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def _number(raw: Any) -> Any:
    # SQLite hands back integral NUMERIC values as int; PostgreSQL as float.
    return float(raw) if isinstance(raw, int | Decimal) else plain(raw)


def _readers(prep: Prepared) -> list[tuple[str, str, Any]]:
    """Per projected column: its name in results, its key in a row, its converter
    (worked out once per call, not per row)."""
    kinds = prep.entity.kinds
    return [
        (
            s.name,
            N.value_column(s.name),
            _number if kinds.get(s.column) is FieldType.NUMBER else plain,
        )
        for s in prep.statements.selected
    ]


def _fact_evidence(row: Row, execution_id: str) -> dict[str, Any]:
    """An `Evidence` of a fact row, as the data `ExecutionResult` validates."""
    confidence = row.get("confidence")
    return {
        "id": f"fact:{row['id']}",
        "kind": "fact",
        "execution_id": execution_id,
        "tenant_id": row["tenant_id"],
        "entity_type": row["entity_type"],
        "entity_id": row["entity_id"],
        "predicate": row["predicate"],
        "value_text": row["value_text"],
        "value_norm": row["value_norm"],
        "source_type": row["source_type"],
        "source_ref": row["source_ref"],
        "confidence": float(confidence) if confidence is not None else None,
        "observed_at": row["observed_at"],
        "valid_until": row["valid_until"],
    }


class _Steps:
    """The requests made so far (for fingerprints) and the notes for the result."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.ran: list[str] = []
        self.notes = [f"template {prep.template.name}"]

    def req(self, role: str, stmt: AnySelect, extra: dict[str, Any] | None = None) -> Request:
        self.ran.append(role)
        # the plan's own parameters are sent as they are (only read, and the same
        # object on every call: the driver's values for it are worked out once)
        return role, stmt, {**self.prep.params, **extra} if extra else self.prep.params


def _fallback(
    steps: _Steps,
) -> Generator[Request, list[Row], tuple[list[Row], dict[str, str], int]]:
    """Rows found by text, each id with the spelling(s) that found it, and the hit
    total (capped at fallback_cap). One statement holds every spelling of a value
    (up to FALLBACK_SLOTS per filter); only values with more spellings take several
    runs, whose hits are then gathered by id and read in the plan's order."""
    prep = steps.prep
    stmt = prep.statements.fallback
    assert stmt is not None
    runs = prep.fallback_runs
    several = len(runs) > 1
    rows: list[Row] = []
    found: dict[str, str] = {}
    total = 0
    for run in runs:
        extra: dict[str, Any] = {**run.params, N.FALLBACK_CAP: prep.fallback_cap}
        if several:
            extra[N.LIMIT] = prep.fallback_cap  # every hit's id, to merge the runs
        got = yield steps.req("fallback", stmt, extra)
        total = max(total, int(got[0][N.ROW_TOTAL]) if got else 0)
        for r in got:
            if r[N.ROW_ID] not in found:
                labels = (terms[r[N.hit_slot(index)]] for index, terms in run.terms.items())
                found[r[N.ROW_ID]] = " + ".join(labels)
                rows.append(r)
    if several:
        ids = sorted(found)[: prep.fallback_cap]
        found = {i: found[i] for i in ids}
        total = len(ids)
        rows = []
        if ids:
            rows = yield steps.req("rows_by_id", prep.statements.rows_by_id, {N.IDS: ids})
    spellings = sum(len(t) for r in runs for t in r.terms.values())
    steps.notes.append(
        f"fallback_text: {spellings} spelling(s) in {len(runs)} statement(s), {total} hit(s)"
    )
    return rows, found, total


def _entity_facts(
    steps: _Steps, ids: list[str]
) -> Generator[Request, list[Row], dict[str, list[Row]]]:
    """Every (fresh) fact of each entity, for templates that report them."""
    st = steps.prep.statements
    every: dict[str, list[Row]] = {}
    if ids and st.uses_entity_facts:
        got = yield steps.req("entity_facts", st.entity_facts, {N.IDS: ids})
        if len(got) >= steps.prep.params[N.FACTS_CAP]:
            got = yield steps.req("entity_facts_ranked", st.entity_facts_ranked, {N.IDS: ids})
            steps.notes.append("entity facts ranked per predicate")
            if len(got) >= steps.prep.params[N.FACTS_CAP]:
                steps.notes.append(f"entity facts cut at {len(got)} rows")
        for f in got:
            every.setdefault(f["entity_id"], []).append(f)
    return every


def _baseline(steps: _Steps, rows: list[Row]) -> Generator[Request, list[Row], int]:
    """The tenant's unfiltered count: read along with the rows (main always carries
    it; fallback rows when any), else by its own statement."""
    carried = [r[N.ROW_BASELINE] for r in rows[:1]]
    if carried:
        return int(carried[0])
    return int((yield steps.req("baseline", steps.prep.statements.baseline))[0][N.COUNT])


def run_flow(prep: Prepared, execution_id: str) -> Flow:
    started = time.perf_counter()
    known = _known(prep)
    st = prep.statements
    steps = _Steps(prep)

    def fallback_ready() -> bool:  # spellings are worked out only when needed
        return st.fallback is not None and bool(prep.fallback_runs)

    rows: list[Row] = []
    matched: dict[str, list[Row]] = {}
    baseline: int | None = None
    count: int | None = None
    if prep.plan.retrieval_policy.facts_first or not fallback_ready():
        rows = yield steps.req("main", st.main)
        if st.main_facts:
            rows, matched, baseline = split_rows(rows)
        if st.counts:
            count = int(rows[0][N.ROW_TOTAL]) if rows else 0
        steps.notes.append(f"{known.retrieval}: {len(rows)} row(s) read")

    matched_term: dict[str, str] | None = None
    capped = False
    if not rows and fallback_ready():
        rows, matched_term, hits = yield from _fallback(steps)
        capped = hits >= prep.fallback_cap
        if st.counts:
            count = hits

    if prep.guarded and baseline is None:
        baseline = yield from _baseline(steps, rows)

    truncated = len(rows) > prep.limit or capped
    rows = rows[: prep.limit]
    if truncated:
        steps.notes.append(f"truncated at limit {prep.limit}")
    ids = [r[N.ROW_ID] for r in rows]
    if matched_term is not None:
        matched = {}  # text hits: no fact stands behind them
    elif st.evidence is not None and ids:
        facts = yield steps.req("evidence", st.evidence, {N.IDS: ids})
        for f in sorted(facts, key=lambda f: (f[FILTER_COLUMN], f["id"])):
            matched.setdefault(f["entity_id"], []).append(f)
    every = yield from _entity_facts(steps, ids)

    evidence: dict[str, dict[str, Any]] = {}
    out_rows = _result_rows(
        prep,
        known.readers,
        rows,
        matched=matched,
        every=every,
        evidence=evidence,
        matched_term=matched_term,
        execution_id=execution_id,
    )
    # One validation of the whole result (rows and evidence as data): pydantic
    # builds the nested models in one call, a fraction of a call per object.
    return ExecutionResult.model_validate(
        {
            "execution_id": execution_id,
            "tenant_id": known.tenant,
            "query_type": prep.template.query_type,
            "entity_type": prep.template.entity_type,
            "template": prep.template.name,
            "plan_hash": known.plan_hash,
            "sql_fingerprints": known.fingerprints_of(steps.ran),
            "rows": out_rows,
            "count": count,
            "truncated": truncated,
            "baseline_total": baseline,
            "evidence": list(evidence.values()),
            "used_fallback": matched_term is not None,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
            "notes": tuple(steps.notes),
            "retrieval": "fallback_text" if matched_term is not None else known.retrieval,
        }
    )


def _fingerprints(prep: Prepared, roles: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(render(s, prep.dialect)[2] for s in _stmts(prep, roles)))


def _retrieval(
    prep: Prepared, used_fallback: bool
) -> Literal["facts", "columns", "fallback_text", "mixed"]:
    has_facts = any(bf.is_fact for bf in prep.bound)
    if used_fallback:
        return "fallback_text"
    if has_facts and any(not bf.is_fact for bf in prep.bound):
        return "mixed"
    return "facts" if has_facts else "columns"


def _result_rows(
    prep: Prepared,
    readers: list[tuple[str, str, Any]],
    rows: list[Row],
    *,
    matched: dict[str, list[Row]],
    every: dict[str, list[Row]],
    evidence: dict[str, dict[str, Any]],
    matched_term: dict[str, str] | None,
    execution_id: str,
) -> list[dict[str, Any]]:
    """Result rows (as data) with their evidence ids; fills `evidence` (each row's
    facts, then its object)."""
    entity_type = prep.template.entity_type
    report_facts = prep.template.shape.entity_facts
    out_rows: list[dict[str, Any]] = []
    for r in rows:
        eid = r[N.ROW_ID]
        evidence_ids: list[str] = []
        for f in matched.get(eid, ()):
            ev = _fact_evidence(f, execution_id)
            evidence.setdefault(ev["id"], ev)
            evidence_ids.append(ev["id"])
        held, cut, kept = _fact_sets(prep, every.get(eid, []))
        for f in kept:
            ev = _fact_evidence(f, execution_id)
            evidence.setdefault(ev["id"], ev)
            if ev["id"] not in evidence_ids:
                evidence_ids.append(ev["id"])
        object_id = f"{entity_type}:{eid}"
        # A text-fallback hit is marked as such: no fact stands behind it.
        evidence[object_id] = {
            "id": object_id,
            "kind": "object" if matched_term is None else "text",
            "execution_id": execution_id,
            "tenant_id": r[N.ROW_TENANT],
            "entity_type": entity_type,
            "entity_id": eid,
            "value_text": None if matched_term is None else matched_term.get(eid),
            "fallback": matched_term is not None,
        }
        evidence_ids.append(object_id)
        out_rows.append(
            {
                "entity_type": entity_type,
                "entity_id": eid,
                "tenant_id": r[N.ROW_TENANT],
                "label": r[N.ROW_LABEL],
                "values": _row_values(prep, readers, r, held),
                "facts": held if report_facts else {},
                "facts_cut": cut,
                "evidence_ids": evidence_ids,
            }
        )
    return out_rows


def _row_values(
    prep: Prepared, readers: list[tuple[str, str, Any]], r: Row, held: dict[str, tuple[str, ...]]
) -> dict[str, Any]:
    """The projected values of one row: its columns, then projected fact fields."""
    values = {name: convert(r[key]) for name, key, convert in readers}
    for name in prep.statements.fact_fields:
        predicate = prep.entity.spec.fields[name].fact or name
        values[name] = held.get(predicate, ())
    return values


def _fact_sets(
    prep: Prepared, facts: list[Row]
) -> tuple[dict[str, tuple[str, ...]], dict[str, int], list[Row]]:
    fields = [f for f in prep.entity.spec.fields.values() if f.fact is not None]
    values: dict[str, list[str]] = {}
    keys: dict[str, list[object]] = {}
    norms: dict[str, list[str]] = {}
    every_norm: dict[str, set[str]] = {}
    ranked: dict[str, int] = {}
    kept: list[Row] = []
    for f in facts:
        predicate = f["predicate"]
        every_norm.setdefault(predicate, set()).add(f["value_norm"])
        mine = norms.setdefault(predicate, [])
        if f["value_norm"] not in mine:
            if len(mine) == FACT_VALUES_CAP:
                continue
            mine.append(f["value_norm"])
        if "q_rank" in f:
            ranked[predicate] = int(f["q_rank"]) + int(f["q_rank_down"]) - 1
        kept.append(f)
        spec = next((x for x in fields if x.fact == predicate and x.aliases), None)
        group = spec.alias_lookup.get(f["value_norm"]) if spec is not None else None
        key: object = ("alias", group[0]) if group is not None else ("norm", f["value_norm"])
        if key not in keys.setdefault(predicate, []):
            keys[predicate].append(key)
            values.setdefault(predicate, []).append(
                group[0] if group is not None else f["value_text"]
            )
    cut = {}
    for predicate, mine in norms.items():
        total = max(len(every_norm[predicate]), ranked.get(predicate, 0))
        if total > len(mine):
            cut[predicate] = total
    return {p: tuple(v) for p, v in values.items()}, cut, kept


def _stmts(prep: Prepared, roles: list[str]) -> list[AnySelect]:
    st = prep.statements
    by_role: dict[str, AnySelect] = {**dict(st.named()), "entity_facts": st.entity_facts}
    return [by_role[r] for r in dict.fromkeys(roles)]


def split_rows(
    rows: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, list[Any]], int | None]:
    """Entity rows (once each, in order), per entity id its matching facts, and the
    baseline (None if the statement does not carry it)."""
    entities: dict[str, dict[str, Any]] = {}
    matched: dict[str, list[Any]] = {}
    if not rows:
        return [], matched, None
    raw = rows[0].get(N.ROW_BASELINE)
    baseline = int(raw) if raw is not None else None
    n = len(FACT_PREFIX)
    fact_keys = [(k, k[n:]) for k in rows[0] if k.startswith(FACT_PREFIX)]
    fact_id = f"{FACT_PREFIX}id"
    for r in rows:
        eid = r[N.ROW_ID]
        if eid is None:  # the baseline's row when nothing matched
            continue
        entities.setdefault(eid, r)
        if fact_keys and r[fact_id] is not None:
            matched.setdefault(eid, []).append({short: r[k] for k, short in fact_keys})
    return list(entities.values()), matched, baseline
