"""Generated deployments: every answer RIGHT or SAFE, never WRONG, never an error.

Hypothesis builds whole deployments (tests/generated/deployments.py: 1–3
entities with fields of every kind, each in a SQL column type that fits the
dialect, int and text ids, two tenants with overlapping ids and values, facts
under any alias, many-valued ones, and in most with two or more entities a
declared relation whose key rows hold a parent id of their tenant, of none, or
of the other tenant only) and zh and en questions about them
(tests/generated/questions.py: count, existence, list, the status of one
object, the comparison of two, the explanation of a name, the sum, average,
maximum or minimum of a number field; conditions of every kind and
conjunctions of 2–3; across the relation, children by a parent's value,
parents by a child's, and children counted per parent or per a parent's value:
tests/generated/relations.py). Each deployment gets a real database
(tests/generated/conftest.py) and each question goes through
`qdsl.plan_and_answer` with the rule planner; the oracle
(tests/generated/oracle.py, plain Python over the generated rows) says what the
answer must be, and the judge (tests/generated/judge.py) calls it RIGHT, SAFE
(an abstention) or WRONG. One WRONG answer or one exception fails the example,
and Hypothesis shrinks it to a minimal deployment and question; the report
prints it as a case for tests/generated/found.toml.

Counts (`ci` profile): ≥ 2,000 questions on SQLite, ≥ 300 on PostgreSQL;
`deep` (make test-deep) ten times that. Reported through `suite_counts`.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import ExitStack
from typing import Any

import pytest
from generated.database import Builder
from generated.deployments import deployments, matrix, matrix_size
from generated.found import dump
from generated.judge import Verdict, judge
from generated.model import Deployment, Dialect
from generated.questions import Question, questions
from generated.runner import Asked, Tally, ask_all
from generated.vocab import CONCEPTS, every_word
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from qdsl.dsl.textnorm import normalize_text
from qdsl.executor import main_facts

# Shapes the product does not serve yet, left out of generation until the fix for each
# lands (issue 20; the row of its table, or the item of its "Build" list). Remove a name
# once its fix is merged: the property then covers that shape too.
KNOWN_GAPS: dict[str, str] = {}
GAPS = frozenset(KNOWN_GAPS)

PER_DEPLOYMENT = 30
DEPLOYMENTS: dict[Dialect, int] = {"sqlite": 105, "postgresql": 17}
AT_LEAST: dict[Dialect, int] = {"sqlite": 2000, "postgresql": 300}
# Anti-vacuity: most answers are RIGHT, and every question shape is answered RIGHT
# somewhere in the SQLite run (a shape that only ever abstains is not being tested;
# the smaller PostgreSQL run may miss a rare one, which the type matrix then asks).
RIGHT_SHARE = 0.7
# questions across a declared relation (tests/generated/relations.py), by shape
RELATION_SHAPES = ("up", "down", "presence", "group_field", "group_object")
# answers across a relation a join forgetting the tenant on the related table would
# get wrong, judged RIGHT in the SQLite run: the isolation cases are asked (how many
# varies widely with the draws, 7 to 90 in runs of the `ci` profile; the bound only
# says they are there: a WRONG one fails the run whatever the count)
ISOLATING_AT_LEAST = 3
# questions asked of each deployment of the type matrix, most of them showing values
MATRIX_QUESTIONS = 60
MATRIX_QTYPES = (
    *("status", "compare", "status", "compare", "count", "existence", "list"),
    "measure",  # the number field's sum, average, max, min in its column type (NULLs too)
)


def _scale() -> int:
    """Ten times the deployments under the `deep` profile (tests/conftest.py)."""
    return max(1, settings().max_examples // 100)


@st.composite
def cases(draw: st.DrawFn, dialect: Dialect) -> tuple[Deployment, list[Question]]:
    dep = draw(deployments(dialect, GAPS))
    asked: list[Question] = []
    for _ in range(PER_DEPLOYMENT):
        # nearly every slot asks; a failing example shrinks by dropping the questions
        # that do not fail (0 is where the shrinker goes)
        if draw(st.integers(0, 19)):
            asked.append(draw(questions(dep, GAPS)))
    return dep, asked


class Served:
    """The database of the deployment being asked, kept while examples reuse it.

    Hypothesis shrinks a failing example mostly by changing its questions, not its
    deployment: the database is built again only when the deployment changes, and an
    answer is asked again only when its question does.
    """

    def __init__(self, build: Builder) -> None:
        self.build = build
        self.stack = ExitStack()
        self.dep: Deployment | None = None
        self.engine: Engine | None = None
        self.answers: dict[Question, Asked] = {}

    def ask(self, dep: Deployment, asked: list[Question]) -> list[Asked]:
        if dep != self.dep:
            self.close()
            self.engine = self.stack.enter_context(self.build(dep))
            self.dep = dep
        assert self.engine is not None
        fresh = [q for q in dict.fromkeys(asked) if q not in self.answers]
        self.answers.update(zip(fresh, ask_all(dep, self.engine, fresh), strict=True))
        return [self.answers[q] for q in asked]

    def close(self) -> None:
        self.stack.close()
        self.dep, self.engine, self.answers = None, None, {}


def _report(dep: Deployment, bad: list[Asked]) -> str:
    lines = [a.line() for a in bad]
    case = dump("(found by the property: say what it shows)", dep, [a.question for a in bad])
    return "\n".join([f"{len(bad)} wrong or failed answer(s):", *lines, "", "as a case:", case])


def _required_shapes(tally: Tally) -> set[str]:
    """Every query type and kind of condition, less those a known gap leaves out."""
    shapes = {f"qtype:{q}" for q in ("count", "existence", "list", "status", "compare")}
    shapes |= {"qtype:explain", "qtype:top", "qtype:measure"}
    shapes |= {f"function:{f}" for f in ("sum", "avg", "max", "min")}
    # a breakdown by some calendar period (which one a run draws varies with the draw)
    shapes |= {"qtype:explain", "qtype:top", "qtype:breakdown", "period"}
    shapes.add("measured")  # a sum or an average per group
    shapes |= {f"cond:{k}" for k in ("value", "not_value", "any_value", "number", "absent")}
    shapes |= {f"cond:{k}" for k in ("date", "fact", "not_fact", "any_fact", "name", "not_name")}
    shapes.add("cond:label")
    shapes.add("by:label")  # an attribute of an object named by its label
    if "bool_conditions" not in GAPS:
        shapes |= {"cond:bool", "cond:not_bool"}
    if "relations" not in GAPS:
        shapes |= {f"rel:{s}" for s in RELATION_SHAPES}
        # (their sub-shapes, "rel:up:name" and the like, are reported, not required: how
        # often each is drawn shifts with any change to the generators)
    return shapes


@pytest.mark.parametrize("dialect", ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def test_generated_deployments_answer_right_or_safe(
    dialect: Dialect,
    request: pytest.FixtureRequest,
    suite_counts: Counter[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    served = Served(
        request.getfixturevalue(f"{'sqlite' if dialect == 'sqlite' else 'pg'}_deployments")
    )
    request.addfinalizer(served.close)
    scale = _scale()
    tally = Tally()
    started = time.perf_counter()

    @settings(
        max_examples=DEPLOYMENTS[dialect] * scale,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(cases(dialect))
    def answer_all(case: tuple[Deployment, list[Question]]) -> None:
        dep, asked = case
        done = served.ask(dep, asked)
        tally.add(dep, done)
        bad = [a for a in done if a.verdict.outcome in ("wrong", "error")]
        assert not bad, _report(dep, bad)

    answer_all()
    elapsed = time.perf_counter() - started
    suite_counts[f"generated deployments ({dialect}), questions"] += tally.asked
    right = tally.outcomes["right"]
    summary = (
        f"generated deployments on {dialect}: {tally.asked} questions in {elapsed:.0f} s, "
        f"{dict(sorted(tally.outcomes.items()))}"
    )
    grouped = {o: tally.by_shape["qtype:breakdown", o] for o in ("right", "safe")}
    measured = {o: tally.by_shape["measured", o] for o in ("right", "safe")}
    # each shape, and each kind of condition or grouping within it
    kinds = sorted({t for t, _ in tally.by_shape if t.startswith("rel:")})
    related = {
        t.removeprefix("rel:"): {o: tally.by_shape[t, o] for o in ("right", "safe")} for t in kinds
    }
    with capsys.disabled():
        print(f"\n{summary}; breakdowns {grouped}, of them measures per group {measured}")
        print(f"across a declared relation: {related}, {tally.isolating} of them tenant-bound")
    assert tally.asked >= AT_LEAST[dialect] * scale, summary
    assert right >= RIGHT_SHARE * tally.asked, summary
    if dialect == "sqlite":
        shapes = _required_shapes(tally)
        never_right = sorted(t for t in shapes if not tally.by_shape[t, "right"])
        assert not never_right, f"{summary}; never answered right: {never_right}"
        if "relations" not in GAPS:
            assert tally.isolating >= ISOLATING_AT_LEAST * scale, summary


def _matrix_params() -> list[Any]:
    out = []
    for dialect in ("sqlite", "postgresql"):
        marks = [pytest.mark.pg] if dialect == "postgresql" else []
        for k in range(matrix_size(dialect, GAPS)):
            out.append(pytest.param(dialect, k, marks=marks, id=f"{dialect}-{k}"))
    return out


@pytest.mark.parametrize("apart", [False, True], ids=["evidence joined", "evidence apart"])
@pytest.mark.parametrize(("dialect", "k"), _matrix_params())
def test_every_column_type_answers_right_or_safe(  # noqa: PLR0917 - pytest passes them by name
    dialect: Dialect,
    k: int,
    apart: bool,
    request: pytest.FixtureRequest,
    suite_counts: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every column type of the dialect, every run: the k-th deployment of the type
    matrix stores each field in the k-th type its kind allows (tests/generated/
    deployments.py), and is asked questions of every shape; `apart`: with every
    page's evidence read by its rows' ids, as a page above EVIDENCE_APART_ROWS
    reads it (the questions' pages are smaller)."""
    if apart:
        monkeypatch.setattr(main_facts, "EVIDENCE_APART_ROWS", 0)
    dep = matrix(dialect, k, GAPS)
    served = Served(
        request.getfixturevalue(f"{'sqlite' if dialect == 'sqlite' else 'pg'}_deployments")
    )
    request.addfinalizer(served.close)
    asked = Counter[str]()

    @settings(
        max_examples=MATRIX_QUESTIONS * _scale(),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(questions(dep, GAPS, MATRIX_QTYPES))
    def answer(q: Question) -> None:
        (done,) = served.ask(dep, [q])
        asked[done.verdict.outcome] += 1
        assert done.verdict.outcome in ("right", "safe"), _report(dep, [done])

    answer()
    suite_counts[f"generated deployments ({dialect}), type matrix questions"] += asked.total()
    assert asked["right"] >= RIGHT_SHARE * asked.total(), dict(asked)


# -- the pieces the property stands on -----------------------------------------------


def test_every_word_of_the_bank_has_one_meaning() -> None:
    meanings: dict[str, set[str]] = {}
    for word, meaning in every_word():
        meanings.setdefault(normalize_text(word), set()).add(meaning)
    clashes = {w: m for w, m in meanings.items() if len(m) > 1}
    assert not clashes


def _fake(status: str, contract: str | None, data: dict[str, Any]) -> Any:
    from qdsl.dsl.ir import AnswerContract
    from qdsl.pipeline import AnswerResult

    return AnswerResult(
        status=status,  # type: ignore[arg-type]
        trace_id="t",
        language="en",
        answer_contract=AnswerContract(contract) if contract else None,
        text="",
        data=data,
    )


def test_the_judge_tells_an_abstention_from_a_wrong_answer() -> None:
    from generated.oracle import expected
    from generated.questions import Cond

    dep = _tiny_deployment()
    senior = Cond("value", "level", "senior", "senior", before_noun=True)
    q = Question(
        "How many senior employees are there?", "en", "count", "employee", "tenant-a", (senior,)
    )
    want = expected(dep, q)
    assert sorted(want.definite) == ["E-1"]

    def verdict(res: Any) -> Verdict:
        return judge(dep, q, res, want)

    assert verdict(_fake("answered", "count_scalar", {"count": 1})).outcome == "right"
    assert verdict(_fake("answered", "count_scalar", {"count": 2})).outcome == "wrong"  # dropped
    assert (
        verdict(_fake("answered", "entity_list", {"items": [{"id": "E-1"}], "total": 1})).outcome
        == "wrong"
    )
    for status in ("clarify", "insufficient_evidence", "not_covered", "refused"):
        assert verdict(_fake(status, None, {})).outcome == "safe"

    listed = Question("List the senior employees", "en", "list", "employee", "tenant-a", (senior,))
    want = expected(dep, listed)
    ok = _fake("answered", "entity_list", {"items": [{"id": "E-1"}], "total": 1})
    other_tenant = _fake("answered", "entity_list", {"items": [{"id": "E-2"}], "total": 1})
    assert judge(dep, listed, ok, want).outcome == "right"
    assert judge(dep, listed, other_tenant, want).outcome == "wrong"


def test_the_judge_reads_values_by_meaning_and_catches_a_lost_one() -> None:
    from datetime import date, datetime

    from generated.oracle import expected

    dep = _tiny_deployment()
    q = Question("员工 E-1 现在什么状态", "zh", "status", "employee", "tenant-a", (), ("E-1",))
    want = expected(dep, q)
    entity = {
        "id": "E-1",
        "label": "张伟",
        "name": "张伟",
        "level": "senior",
        "remote": 1,  # 0/1 is a yes/no
        "salary": 45000.0,  # a float is the number
        "hired_on": datetime(2026, 3, 2),  # a date as its midnight
        "facts": {"skill": ["golang", "Python"]},  # any alias of each value
    }
    assert (
        judge(dep, q, _fake("answered", "entity_snapshot", {"entity": entity}), want).outcome
        == "right"
    )
    one_skill = {**entity, "facts": {"skill": "Go"}}
    assert (
        judge(dep, q, _fake("answered", "entity_snapshot", {"entity": one_skill}), want).outcome
        == "wrong"
    )
    no_date = {k: v for k, v in entity.items() if k != "hired_on"}
    assert (
        judge(dep, q, _fake("answered", "entity_snapshot", {"entity": no_date}), want).outcome
        == "wrong"
    )
    day_off = {**entity, "hired_on": date(2026, 3, 1)}
    assert (
        judge(dep, q, _fake("answered", "entity_snapshot", {"entity": day_off}), want).outcome
        == "wrong"
    )

    cmp = Question(
        "Compare employees E-1 and E-2", "en", "compare", "employee", "tenant-a", (), ("E-1", "E-2")
    )
    want = expected(dep, cmp)
    subjects = [{"id": "E-1"}, {"id": "E-2"}]
    differences = [
        {"field": "name", "values": {"E-1": "张伟", "E-2": "李娜"}},
        {"field": "level", "values": {"E-1": "senior", "E-2": "junior"}},
        {"field": "remote", "values": {"E-1": True, "E-2": False}},
        {"field": "hired_on", "values": {"E-1": "2026-03-02", "E-2": None}},
        {"field": "skill", "values": {"E-1": ["Go", "Python"], "E-2": ["Python"]}},
    ]
    full = {"subjects": subjects, "differences": differences}
    assert (
        judge(dep, cmp, _fake("answered", "comparison_with_basis", full), want).outcome == "right"
    )
    short = {"subjects": subjects, "differences": differences[:-1]}
    assert (
        judge(dep, cmp, _fake("answered", "comparison_with_basis", short), want).outcome == "wrong"
    )
    same = {"field": "salary", "values": {"E-1": 45000, "E-2": "45000.00"}}
    extra = {"subjects": subjects, "differences": [*differences, same]}
    assert (
        judge(dep, cmp, _fake("answered", "comparison_with_basis", extra), want).outcome == "wrong"
    )


def _tiny_deployment() -> Deployment:
    from datetime import UTC, date, datetime
    from decimal import Decimal

    from generated.model import Entity, Fact, Field
    from generated.vocab import NOUNS

    concepts = {c.key: c for c in CONCEPTS}
    ent = Entity(
        NOUNS[0],
        "TEXT",
        "TEXT",
        (
            Field(concepts["level"], "TEXT"),
            Field(concepts["remote"], "BOOLEAN"),
            Field(concepts["salary"], "NUMERIC"),
            Field(concepts["hired_on"], "DATE", nullable=True),
            Field(concepts["skill"], None),
        ),
    )
    a = [
        {
            "id": "E-1",
            "label": "张伟",
            "level": "senior",
            "remote": True,
            "salary": Decimal(45000),
            "hired_on": date(2026, 3, 2),
        },
        {
            "id": "E-2",
            "label": "李娜",
            "level": "junior",
            "remote": False,
            "salary": Decimal(45000),
            "hired_on": None,
        },
    ]
    b = [
        {
            "id": "E-2",
            "label": "刘洋",
            "level": "senior",
            "remote": True,
            "salary": Decimal(5000),
            "hired_on": None,
        }
    ]
    facts = (
        Fact("tenant-a", "employee", "E-1", "skill", "golang", "Go"),
        Fact("tenant-a", "employee", "E-1", "skill", "Python", "Python"),
        Fact("tenant-a", "employee", "E-2", "skill", "Python", "Python"),
    )
    rows = ((("tenant-a", "employee"), tuple(a)), (("tenant-b", "employee"), tuple(b)))
    return Deployment("sqlite", datetime(2026, 6, 15, 10, 30, tzinfo=UTC), (ent,), rows, facts)  # type: ignore[arg-type]


def test_passage_texts_share_no_name_a_text_search_could_find() -> None:
    from generated.deployments import PASSAGE_TEXTS
    from generated.vocab import NOUNS

    texts = [normalize_text(t) for t in PASSAGE_TEXTS]
    for noun in NOUNS:
        for label in noun.labels:
            parts = (
                {label} if label.isascii() else {label[i : i + 2] for i in range(len(label) - 1)}
            )
            for part in parts:
                assert not any(normalize_text(part) in t for t in texts), (label, part)


def test_the_judge_checks_each_passage_against_the_declared_columns() -> None:
    from dataclasses import replace

    from generated.judge import excerpt
    from generated.model import Passages
    from generated.oracle import expected
    from generated.questions import Cond

    dep = _tiny_deployment()
    ent = replace(dep.entities[0], passages=Passages("details", "chapter", declared=False))
    long = "Every request passes two reviews before it is filed; " * 5
    rows = tuple(
        (key, tuple({**r, "details": long, "chapter": "总则"} for r in these))
        for key, these in dep.rows
    )
    dep = replace(dep, entities=(ent,), rows=rows)
    assert dep.catalog.entity(ent.name).passage_column == "details"
    q = Question(
        "解释一下张伟",
        "zh",
        "explain",
        ent.name,
        "tenant-a",
        (Cond("label", "name", "张伟", "张伟"),),
    )
    want = expected(dep, q)
    assert sorted(want.definite) == ["E-1"]
    right = {"id": "E-1", "title": "张伟", "text": excerpt(long), "section": "总则"}
    assert len(right["text"]) == 201

    def outcome(*passages: dict[str, Any]) -> str:
        data = {"passages": list(passages), "citations": []}
        res = _fake("answered", "explanation_with_citations", data)
        return judge(dep, q, res, want).outcome

    assert outcome(right) == "right"
    assert outcome({**right, "text": long}) == "wrong"  # not cut as documented
    assert outcome({**right, "text": "张伟"}) == "wrong"  # quotes the label, not the passage
    assert outcome({**right, "section": None}) == "wrong"
    assert outcome(right, {**right, "id": "E-2", "title": "李娜"}) == "wrong"
    assert outcome() == "wrong"
    assert judge(dep, q, _fake("insufficient_evidence", None, {}), want).outcome == "safe"


def test_the_judge_wants_every_group_with_its_count() -> None:
    from generated.oracle import expected

    dep = _tiny_deployment()
    per_level = Question(
        "How many employees per level?",
        "en",
        "breakdown",
        "employee",
        "tenant-a",
        tags=frozenset({"group:level"}),
    )
    want = expected(dep, per_level)
    right = {"groups": [{"keys": ["junior"], "value": 1}, {"keys": ["senior"], "value": 1}]}
    right |= {"total": 2, "other": 0, "truncated": False}

    def outcome(data: dict[str, Any], contract: str = "breakdown_table") -> str:
        return judge(dep, per_level, _fake("answered", contract, data), want).outcome

    assert outcome(right) == "right"
    assert outcome({**right, "total": 3}) == "wrong"
    assert outcome({**right, "groups": right["groups"][:1]}) == "wrong"  # a group lost
    assert outcome({**right, "groups": [{"keys": ["senior"], "value": 2}]}) == "wrong"
    other = [{"keys": ["lead"], "value": 1}, {"keys": ["senior"], "value": 1}]
    assert outcome({**right, "groups": other}) == "wrong"  # a key the rows lack
    assert outcome({"count": 2}, "count_scalar") == "wrong"  # the grouping dropped
    monthly = Question(
        "How many employees per month?",
        "en",
        "breakdown",
        "employee",
        "tenant-a",
        tags=frozenset({"group:hired_on", "grain:month"}),
    )
    want = expected(dep, monthly)
    by_month = {"groups": [{"keys": ["2026-03"], "value": 1}, {"keys": [None], "value": 1}]}
    by_month |= {"total": 2, "other": 0, "truncated": False}
    assert judge(dep, monthly, _fake("answered", "breakdown_table", by_month), want).outcome == (
        "right"
    )
    by_day = {**by_month, "groups": [{"keys": ["2026-03-02"], "value": 1}, by_month["groups"][1]]}
    assert judge(dep, monthly, _fake("answered", "breakdown_table", by_day), want).outcome == (
        "wrong"
    )


def _related_deployment() -> Deployment:
    """Employees (the children) of sites: tenant-a's E-1 at its site 1, E-2 at site 2,
    which only the other tenant holds, E-3 at no site; tenant-b's E-2 at none."""
    from dataclasses import replace

    from generated.model import Entity, Field, Relation
    from generated.vocab import NOUNS

    dep = _tiny_deployment()
    concepts = {c.key: c for c in CONCEPTS}
    site = Entity(NOUNS[1], "INTEGER", "TEXT", (Field(concepts["region"], "TEXT"),))
    rel = Relation(
        "site", "employee", "site", "site_id", "INTEGER", ("站点", "site", "sites"),
        "employees", ("员工", "employee", "employees"),
    )  # fmt: skip
    keys = {("tenant-a", "E-1"): "1", ("tenant-a", "E-2"): "2"}
    rows = [
        ((tenant, name), tuple({**r, "site_id": keys.get((tenant, str(r["id"])))} for r in these))
        for (tenant, name), these in dep.rows
    ]
    employee_a = dict(rows)["tenant-a", "employee"]
    extra = {**employee_a[0], "id": "E-3", "label": "王芳", "site_id": None}
    rows[0] = (("tenant-a", "employee"), (*employee_a, extra))
    rows += [
        (("tenant-a", "site"), ({"id": "1", "label": "Ridge", "region": "east"},)),
        (
            ("tenant-b", "site"),
            (
                {"id": "1", "label": "Harbor Point", "region": "north"},
                {"id": "2", "label": "滨江基地", "region": "east"},
            ),
        ),
    ]
    return replace(dep, entities=(*dep.entities, site), rows=tuple(rows), relations=(rel,))


def test_the_judge_never_lets_the_other_tenants_parent_make_a_child_match() -> None:
    from generated.oracle import expected
    from generated.questions import Cond

    dep = _related_deployment()
    east = Cond("value", "site.region", "华东", "east")
    q = Question(
        "华东站点的员工有哪些", "zh", "list", "employee", "tenant-a", (east,),
        tags=frozenset({"rel:up"}),
    )  # fmt: skip
    want = expected(dep, q)
    assert sorted(want.definite) == ["E-1"]
    # the join that forgets the tenant on sites also takes E-2 (site 2 is tenant-b's)
    assert sorted(expected(dep, q, tenant_bound=False).definite) == ["E-1", "E-2"]

    def outcome(*ids: str) -> str:
        data = {"items": [{"id": i} for i in ids], "total": len(ids)}
        return judge(dep, q, _fake("answered", "entity_list", data), want).outcome

    assert outcome("E-1") == "right"
    assert outcome("E-1", "E-2") == "wrong"
    assert outcome() == "wrong"

    senior = Cond("value", "employees.level", "senior", "senior")
    sites = Question(
        "有高级员工的站点有多少个", "zh", "count", "site", "tenant-b", (senior,),
        tags=frozenset({"rel:down"}),
    )  # fmt: skip
    # tenant-b's senior employee is at no site; tenant-a's senior E-1 is at its site 1
    assert expected(dep, sites).definite == frozenset()
    assert expected(dep, sites, tenant_bound=False).definite == {"1"}
    assert (
        judge(
            dep, sites, _fake("answered", "count_scalar", {"count": 1}), expected(dep, sites)
        ).outcome
        == "wrong"
    )
    count = _fake("answered", "count_scalar", {"count": 0})
    assert judge(dep, sites, count, expected(dep, sites)).outcome == "right"


def test_the_judge_wants_each_parents_children_counted_and_labelled() -> None:
    from generated.oracle import expected

    dep = _related_deployment()
    per_site = Question(
        "每个站点有多少员工", "zh", "breakdown", "employee", "tenant-a",
        tags=frozenset({"rel:group_object", "group:site"}),
    )  # fmt: skip
    want = expected(dep, per_site)
    assert want.groups == {"1": 1, None: 2}  # E-2's site is the other tenant's: none
    right = [{"keys": ["1"], "labels": ["Ridge"], "value": 1}, {"keys": [None], "value": 2}]

    def outcome(groups: list[dict[str, Any]]) -> str:
        data = {"groups": groups, "total": 3, "other": 0, "truncated": False}
        res = _fake("answered", "breakdown_table", data)
        return judge(dep, per_site, res, want).outcome

    assert outcome(right) == "right"
    assert outcome([{**right[0], "labels": ["Harbor Point"]}, right[1]]) == "wrong"
    careless = [{"keys": ["1"], "labels": ["Ridge"], "value": 1}]
    careless += [{"keys": ["2"], "labels": ["滨江基地"], "value": 1}, {"keys": [None], "value": 1}]
    assert outcome(careless) == "wrong"
    per_region = Question(
        "How many employees per site region?", "en", "breakdown", "employee", "tenant-a",
        tags=frozenset({"rel:group_field", "group:site.region"}),
    )  # fmt: skip
    assert expected(dep, per_region).groups == {"east": 1, None: 2}


def test_a_case_with_a_relation_reads_back_as_it_was_written(tmp_path: Any) -> None:
    from generated.found import expect_of, load
    from generated.oracle import expected
    from generated.questions import Cond

    dep = _related_deployment()
    asked = [
        Question(
            "华东站点的员工有哪些", "zh", "list", "employee", "tenant-a",
            (Cond("value", "site.region", "华东", "east"),), tags=frozenset({"rel:up"}),
        ),
        Question(
            "每个站点有多少员工", "zh", "breakdown", "employee", "tenant-a",
            tags=frozenset({"rel:group_object", "group:site"}),
        ),
    ]  # fmt: skip
    path = tmp_path / "found.toml"
    path.write_text(dump("a relation", dep, asked), encoding="utf-8")
    (example,) = load(path)
    assert example.deployment == dep
    assert example.questions == tuple(asked)
    assert list(example.expects) == [expect_of(expected(dep, q)) for q in asked]
