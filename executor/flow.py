"""The execution steps of a prepared plan, free of I/O.

`run_flow` is a generator: it yields `(role, statement, params)` requests and
receives each request's rows (`rows.Rows`: SQLAlchemy's processed tuples and
where each column is), then returns how to make the ExecutionResult, which its
driver calls once the connection is back in its pool. The sync and asyncio
drivers in `executor.run` only carry requests to a connection, so both run
exactly the same steps:

1. facts first: the entity rows matching column predicates and fact EXISTS,
   capped at limit+1, with the match total for count/list, the tenant's
   unfiltered count (the baseline guard, when the plan filters) and, on a
   page of up to `EVIDENCE_APART_ROWS`, the facts that matched each row's
   fact filters (its evidence), all in one statement;
2. only if that found nothing and the plan allows it: bounded text fallback
   over text_grams, every spelling of the value in one statement, confirmed
   with LIKE/ILIKE (instr on SQLite), returning the rows themselves;
3. the baseline on its own, only when no row carried it;
4. on a larger page, the evidence of the rows kept, by their ids, when the
   rows came from facts (`executor.main_facts`);
5. every fact of each row, for templates that report them (status, explain,
   diagnose, compare) or project fact fields.

Rows are read where they are used, straight from the tuples, and the result
is made from them as data and validated once (`result.builder()`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Generator, Sequence
from datetime import date
from decimal import Decimal
from functools import partial
from operator import itemgetter
from typing import Any, Literal

from qdsl.dsl.catalog import AliasGroup, FieldType
from qdsl.dsl.ir import Plan
from qdsl.executor import names as N
from qdsl.executor.compile import Prepared, render
from qdsl.executor.fact_values import fact_sets
from qdsl.executor.gc_pause import collector_held
from qdsl.executor.kind_flow import own_flow
from qdsl.executor.main_facts import FACT_PREFIX, group_evidence, split_rows
from qdsl.executor.result import ExecutionResult, Validated, builder
from qdsl.executor.rows import Layout, Rows
from qdsl.executor.statements import AnySelect
from qdsl.executor.tables import FACT_COLUMNS

Row = Sequence[Any]
Request = tuple[str, AnySelect, dict[str, Any]]
# A flow returns how to make its result: the driver makes it once the connection
# is back in its pool, so no connection (nor transaction) waits on Python work.
Flow = Generator[Request, Rows, Callable[[], ExecutionResult]]
Convert = Callable[[Any], Any]


def plain(value: Any) -> Any:
    """Values as JSON-ready data, the same on every dialect (a `date` field's
    value as its ISO date: `executor.column_types` reads it as a date)."""
    if isinstance(value, date):  # datetimes too
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def _number(raw: Any) -> Any:
    # SQLite hands back integral NUMERIC values as int; PostgreSQL as float.
    return float(raw) if isinstance(raw, int | Decimal) else plain(raw)


# Values `plain` / `_number` hand back unchanged (exact types): a row's value of
# one of these is kept without a call.
_PLAIN_AS_IS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_NUMBER_AS_IS: frozenset[type] = frozenset({float, type(None)})


class _Columns:
    """Where a call finds what it reads in rows of one layout: the entity's id,
    tenant and label, and its projected values with their converters."""

    def __init__(self, prep: Prepared, layout: Layout) -> None:
        self.layout = layout
        self.id = layout.getter(N.ROW_ID)
        self.tenant = layout.getter(N.ROW_TENANT)
        self.label = layout.getter(N.ROW_LABEL)
        kinds = prep.entity.kinds
        # per projected column: its name, where it is, the exact types kept as
        # they are (the driver's value is the value) and the converter of the rest
        self.values: list[tuple[str, int, frozenset[type], Convert]] = []
        for s in prep.statements.selected:
            number = (s.kind if s.path else kinds.get(s.column)) is FieldType.NUMBER
            convert: Convert = _number if number else plain
            i = layout.index[N.value_column(s.name)]
            self.values.append((s.name, i, _NUMBER_AS_IS if number else _PLAIN_AS_IS, convert))


class _Facts:
    """Where a fact's columns are in rows of one layout (`prefix`: the main
    statement carries its matching facts as `f_` columns)."""

    def __init__(self, layout: Layout, prefix: str) -> None:
        at = [layout.index[prefix + c] for c in FACT_COLUMNS]
        self.pick = itemgetter(*at)
        self.entity_id = layout.getter(prefix + "entity_id")
        self.predicate = layout.getter(prefix + "predicate")
        self.value_text = layout.getter(prefix + "value_text")
        self.value_norm = layout.getter(prefix + "value_norm")
        # rows of entity_facts_ranked rank their value among their predicate's values
        ranked = N.FACT_RANK_DOWN in layout.index
        self.rank = layout.getter(N.FACT_RANK) if ranked else None
        self.rank_down = layout.getter(N.FACT_RANK_DOWN) if ranked else None

    def held(self, row: Row) -> int | None:
        """How many distinct values the fact's predicate holds for its entity."""
        if self.rank is None or self.rank_down is None:
            return None
        return int(self.rank(row)) + int(self.rank_down(row)) - 1

    def read(self, row: Row) -> Sequence[Any]:
        """The fact's 13 columns (`FACT_COLUMNS`)."""
        values: Sequence[Any] = self.pick(row)
        return values


def _facts_of(layout: Layout, prefix: str = "") -> _Facts:
    found = layout.memo.get(prefix)
    if not isinstance(found, _Facts):
        found = layout.memo[prefix] = _Facts(layout, prefix)
    return found


class _Known:
    """What a call works out from its Prepared alone, once per Prepared (a plan
    served again from the cache is the same object)."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.plan_hash = plan_hash(prep)
        self.retrieval = _retrieval(prep, False)
        self.tenant = str(prep.params[N.TENANT])
        template = prep.template
        self.template = template.name
        self.note = f"template {self.template}"
        self.query_type = template.query_type
        self.entity_type = template.entity_type
        self.report_facts = template.shape.entity_facts
        self.fingerprints: dict[tuple[str, ...], tuple[str, ...]] = {}
        # per layout (held here, so an id is not reused while cached)
        self.layouts: dict[int, _Columns] = {}
        # fact fields projected: their name and predicate
        fields = prep.entity.spec.fields
        self.fact_fields = [
            (name, fields[name].fact or name) for name in prep.statements.fact_fields
        ]
        # predicate -> the alias groups of its field (spellings of one value are one)
        self.groups: dict[str, dict[str, AliasGroup]] = {}
        for spec in fields.values():
            if spec.fact is not None and spec.aliases:
                self.groups.setdefault(spec.fact, spec.alias_lookup)

    def fingerprints_of(self, roles: list[str]) -> tuple[str, ...]:
        key = tuple(roles)
        found = self.fingerprints.get(key)
        if found is None:
            found = self.fingerprints[key] = _fingerprints(self.prep, roles)
        return found

    def columns(self, layout: Layout) -> _Columns:
        found = self.layouts.get(id(layout))
        if found is None or found.layout is not layout:
            if len(self.layouts) >= _LAYOUTS_MAX:
                self.layouts.clear()
            found = self.layouts[id(layout)] = _Columns(self.prep, layout)
        return found


_LAYOUTS_MAX = 64


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


class _Steps:
    """The requests made so far (for fingerprints) and the notes for the result."""

    def __init__(self, prep: Prepared, note: str) -> None:
        self.prep = prep
        self.ran: list[str] = []
        self.notes = [note]

    def req(self, role: str, stmt: AnySelect, extra: dict[str, Any] | None = None) -> Request:
        self.ran.append(role)
        # the plan's own parameters are sent as they are (only read, and the same
        # object on every call: the driver's values for it are worked out once)
        return role, stmt, {**self.prep.params, **extra} if extra else self.prep.params


class _Entities:
    """The entity rows a call answers with, and the layout they are read by."""

    def __init__(self, layout: Layout | None = None, rows: Sequence[Row] = ()) -> None:
        self.layout = layout
        self.rows = rows


def _fallback(
    steps: _Steps,
) -> Generator[Request, Rows, tuple[_Entities, dict[Any, str], int]]:
    """Rows found by text, each id with the spelling(s) that found it, and the hit
    total (capped at fallback_cap). One statement holds every spelling of a value
    (up to FALLBACK_SLOTS per filter); only values with more spellings take several
    runs, whose hits are then gathered by id and read in the plan's order."""
    prep = steps.prep
    stmt = prep.statements.fallback
    assert stmt is not None
    runs = prep.fallback_runs
    several = len(runs) > 1
    found_rows = _Entities()
    found: dict[Any, str] = {}
    total = 0
    for run in runs:
        extra: dict[str, Any] = {**run.params, N.FALLBACK_CAP: prep.fallback_cap}
        if several:
            extra[N.LIMIT] = prep.fallback_cap  # every hit's id, to merge the runs
        got = yield steps.req("fallback", stmt, extra)
        layout = got.layout
        if got.data:
            total = max(total, int(layout.getter(N.ROW_TOTAL)(got.data[0])))
        row_id = layout.getter(N.ROW_ID)
        slots = [(layout.getter(N.hit_slot(index)), terms) for index, terms in run.terms.items()]
        kept: list[Row] = []
        for r in got.data:
            eid = row_id(r)
            if eid not in found:
                found[eid] = " + ".join(terms[slot(r)] for slot, terms in slots)
                kept.append(r)
        found_rows = _Entities(layout, [*found_rows.rows, *kept]) if kept else found_rows
    if several:
        ids = sorted(found)[: prep.fallback_cap]
        found = {i: found[i] for i in ids}
        total = len(ids)
        found_rows = _Entities()
        if ids:
            got = yield steps.req("rows_by_id", prep.statements.rows_by_id, {N.IDS: ids})
            found_rows = _Entities(got.layout, got.data)
    spellings = sum(len(t) for r in runs for t in r.terms.values())
    steps.notes.append(
        f"fallback_text: {spellings} spelling(s) in {len(runs)} statement(s), {total} hit(s)"
    )
    return found_rows, found, total


def _entity_facts(
    steps: _Steps, ids: list[Any]
) -> Generator[Request, Rows, tuple[_Facts | None, dict[Any, list[Row]]]]:
    """The (fresh) facts of each entity, for templates that report them or
    project fact fields (`statements._entity_facts`: its values within the bound)."""
    st = steps.prep.statements
    cap = steps.prep.params[N.FACTS_CAP]
    every: dict[Any, list[Row]] = {}
    got = yield steps.req("entity_facts", st.entity_facts, {N.IDS: ids})
    if len(got.data) >= cap:
        # not every fact fit: read them bounded per entity and predicate instead,
        # each value ranked, so each predicate says how many values it holds
        got = yield steps.req("entity_facts_ranked", st.entity_facts_ranked, {N.IDS: ids})
        steps.notes.append("entity facts ranked per predicate")
        if len(got.data) >= cap:
            steps.notes.append(f"entity facts cut at {len(got.data)} rows")
    facts = _facts_of(got.layout)
    entity_id = facts.entity_id
    for f in got.data:
        every.setdefault(entity_id(f), []).append(f)
    return facts, every


def _baseline(steps: _Steps, found: _Entities) -> Generator[Request, Rows, int]:
    """The tenant's unfiltered count: read along with the rows (main always carries
    it; fallback rows when any), else by its own statement."""
    if found.rows:
        assert found.layout is not None
        return int(found.layout.getter(N.ROW_BASELINE)(found.rows[0]))
    got = yield steps.req("baseline", steps.prep.statements.baseline)
    return int(got.layout.getter(N.COUNT)(got.data[0]))


def _fallback_ready(prep: Prepared) -> bool:
    # spellings are worked out only when needed
    return prep.statements.fallback is not None and bool(prep.fallback_runs)


def _read_main(
    got: Rows, steps: _Steps, retrieval: str
) -> tuple[_Entities, dict[Any, list[Row]], _Facts | None, int | None, int | None]:
    """The main statement's entity rows, each one's matching facts if it carries
    them (and where they are in its row), the baseline and the match total."""
    st = steps.prep.statements
    matched: dict[Any, list[Row]] = {}
    main_facts: _Facts | None = None
    baseline: int | None = None
    count: int | None = None
    rows: Sequence[Row]
    if st.main_facts:
        rows, matched, baseline = split_rows(got)
        if matched:
            main_facts = _facts_of(got.layout, FACT_PREFIX)
    else:
        rows = got.data
    if st.counts:
        count = int(got.layout.getter(N.ROW_TOTAL)(rows[0])) if rows else 0
    steps.notes.append(f"{retrieval}: {len(rows)} row(s) read")
    return _Entities(got.layout, rows), matched, main_facts, baseline, count


def _evidence(
    steps: _Steps, ids: list[Any]
) -> Generator[Request, Rows, tuple[_Facts | None, dict[Any, list[Row]]]]:
    """The facts that matched each row's fact filters, per entity id (a large
    page: `main_facts.evidence`)."""
    stmt = steps.prep.statements.evidence
    assert stmt is not None
    got = yield steps.req("evidence", stmt, {N.IDS: ids})
    if not got.data:
        return None, {}
    return _facts_of(got.layout), group_evidence(got)


def _truncate(found: _Entities, limit: int) -> bool:
    """Cap the rows at the plan's limit (statements read one more, to know)."""
    if len(found.rows) <= limit:
        return False
    found.rows = found.rows[:limit]
    return True


def run_flow(prep: Prepared, execution_id: str) -> Flow:
    started = time.perf_counter()
    known = _known(prep)
    st = prep.statements
    if st.own is not None:
        # the kind's own statements and reader (`executor.kind_flow`)
        return (
            yield from own_flow(
                prep,
                execution_id,
                plan_hash=known.plan_hash,
                fingerprints=known.fingerprints_of,
                plain=plain,
            )
        )
    steps = _Steps(prep, known.note)

    found = _Entities()
    matched: dict[Any, list[Row]] = {}
    main_facts: _Facts | None = None
    baseline: int | None = None
    count: int | None = None
    if prep.plan.retrieval_policy.facts_first or not _fallback_ready(prep):
        got = yield steps.req("main", st.main)
        found, matched, main_facts, baseline, count = _read_main(got, steps, known.retrieval)

    matched_term: dict[Any, str] | None = None
    capped = False
    if not found.rows and _fallback_ready(prep):
        found, matched_term, hits = yield from _fallback(steps)
        capped = hits >= prep.fallback_cap
        if st.counts:
            count = hits

    if prep.guarded and baseline is None:
        baseline = yield from _baseline(steps, found)

    truncated = _truncate(found, prep.limit) or capped
    if truncated:
        steps.notes.append(f"truncated at limit {prep.limit}")
    columns = known.columns(found.layout) if found.layout is not None else None
    if matched_term is not None:
        matched = {}  # text hits: no fact stands behind them
    elif st.evidence is not None and columns is not None and found.rows:
        ids = [columns.id(r) for r in found.rows]
        main_facts, matched = yield from _evidence(steps, ids)
    every_facts: _Facts | None = None
    every: dict[Any, list[Row]] = {}
    if st.uses_entity_facts and columns is not None and found.rows:
        ids = [columns.id(r) for r in found.rows]
        every_facts, every = yield from _entity_facts(steps, ids)

    parts = _Parts(
        known,
        columns,
        found.rows,
        matched=(main_facts, matched),
        every=(every_facts, every),
        matched_term=matched_term,
        execution_id=execution_id,
    )
    summary = _Summary(steps, count, truncated, baseline, started)
    return partial(parts.result, builder(), summary)


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


class _Summary:
    """What a call found besides its rows."""

    __slots__ = ("baseline", "count", "started", "steps", "truncated")

    def __init__(
        self,
        steps: _Steps,
        count: int | None,
        truncated: bool,
        baseline: int | None,
        started: float,
    ) -> None:
        self.steps = steps
        self.count = count
        self.truncated = truncated
        self.baseline = baseline
        self.started = started


class _Parts:
    """Everything the result is made of, read from the rows by one builder."""

    def __init__(
        self,
        known: _Known,
        columns: _Columns | None,
        rows: Sequence[Row],
        *,
        matched: tuple[_Facts | None, dict[Any, list[Row]]],
        every: tuple[_Facts | None, dict[Any, list[Row]]],
        matched_term: dict[Any, str] | None,
        execution_id: str,
    ) -> None:
        self.known = known
        self.columns = columns
        self.rows = rows
        self.matched = matched
        self.every = every
        self.matched_term = matched_term
        self.execution_id = execution_id

    def result(self, build: Validated, summary: _Summary) -> ExecutionResult:
        with collector_held(len(self.rows)):
            return self._result(build, summary)

    def _result(self, build: Validated, summary: _Summary) -> ExecutionResult:
        known = self.known
        evidence: dict[str, Any] = {}
        rows = tuple(self._rows(build, evidence)) if self.columns is not None else ()
        text = self.matched_term is not None
        return build.make(
            {
                "execution_id": self.execution_id,
                "tenant_id": known.tenant,
                "query_type": known.query_type,
                "entity_type": known.entity_type,
                "template": known.template,
                "plan_hash": known.plan_hash,
                "sql_fingerprints": known.fingerprints_of(summary.steps.ran),
                "rows": rows,
                "count": summary.count,
                "truncated": summary.truncated,
                "baseline_total": summary.baseline,
                "evidence": tuple(evidence.values()),
                "used_fallback": text,
                "elapsed_ms": round((time.perf_counter() - summary.started) * 1000, 3),
                "notes": tuple(summary.steps.notes),
                "retrieval": "fallback_text" if text else known.retrieval,
            }
        )

    def _rows(self, build: Validated, evidence: dict[str, Any]) -> list[Any]:
        """Result rows with their evidence ids; fills `evidence` (each row's
        facts, then its object)."""
        columns = self.columns
        assert columns is not None
        execution_id = self.execution_id
        entity_type = self.known.entity_type
        report_facts = self.known.report_facts
        main_facts, matched = self.matched
        every_facts, every = self.every
        matched_term = self.matched_term
        text = matched_term is not None
        row_id, row_tenant, row_label = columns.id, columns.tenant, columns.label
        value_columns = columns.values
        fact_fields = self.known.fact_fields
        groups = self.known.groups
        entity = build.entity
        out: list[Any] = []
        for r in self.rows:
            eid = row_id(r)
            evidence_ids: list[str] = []
            if main_facts is not None:
                for f in matched.get(eid, ()):
                    evidence_ids.append(_fact(build, main_facts, f, execution_id, evidence))
            held: dict[str, tuple[str, ...]] = {}
            cut: dict[str, int] = {}
            own = every.get(eid, ()) if every_facts is not None else ()
            if own and every_facts is not None:
                held, cut, behind = fact_sets(every_facts, own, groups)
                # every fact behind a value the row states is its evidence
                for f in behind:
                    ev = _fact(build, every_facts, f, execution_id, evidence)
                    if ev not in evidence_ids:
                        evidence_ids.append(ev)
            values = {
                name: v if type(v := r[i]) in keep else convert(v)
                for name, i, keep, convert in value_columns
            }
            for name, predicate in fact_fields:
                values[name] = held.get(predicate, ())
            out.append(
                entity(
                    evidence,
                    execution_id,
                    entity_type,
                    eid,
                    row_tenant(r),
                    row_label(r),
                    values,
                    held if report_facts else {},
                    cut,
                    evidence_ids,
                    text,
                    # A text-fallback hit is marked as such: no fact stands behind it.
                    matched_term.get(eid) if matched_term is not None else None,
                )
            )
        return out


def _fact(
    build: Validated, at: _Facts, row: Row, execution_id: str, evidence: dict[str, Any]
) -> str:
    """The evidence id of the fact in `row`, its evidence made if not yet."""
    fact = at.read(row)
    key = f"fact:{fact[0]}"
    if key not in evidence:
        evidence[key] = build.fact_evidence(key, execution_id, fact)
    return key


def _stmts(prep: Prepared, roles: list[str]) -> list[AnySelect]:
    st = prep.statements
    by_role: dict[str, AnySelect] = {
        **dict(st.named()),
        "entity_facts": st.entity_facts,
        "entity_facts_ranked": st.entity_facts_ranked,
    }
    return [by_role[r] for r in dict.fromkeys(roles)]
