"""Every query type is covered everywhere, and a new one takes three files.

The records live in `qdsl.dsl.kinds` (one module per kind, one registry). The
last tests add a real query kind that exists only here, a scalar `max` of a
number field with its own statements, result shape, renderer and consistency
rule, by applying the edits docs/architecture.md ("How to add a query kind")
names to a copy of the tree, and answer questions of it end to end on SQLite
against an oracle. The files touched are computed by comparing the copy with
the tree, and dropping any one edit must make the run fail.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.kinds import (
    KINDS,
    MANDATORY_CHECKS,
    KindTable,
    QueryType,
    VerifierCheck,
    cue_table,
    kind_for_contract,
    spelling_table,
)
from qdsl.executor.templates import registry
from qdsl.planner.cues import CUES_BY_KIND
from qdsl.render import RENDERERS
from qdsl.verifier import CHECKS

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = ("dsl", "executor", "verifier", "facts", "envelope")


def test_every_query_type_has_one_record_and_one_contract() -> None:
    assert set(KINDS) == set(QueryType)
    for qt, kind in KINDS.items():
        assert kind.query_type is qt
        assert kind_for_contract(kind.contract) is kind
        assert kind.data_keys, qt


@pytest.mark.parametrize(
    ("table", "name"), [(RENDERERS, "renderers"), (CUES_BY_KIND, "planner cues")]
)
def test_every_executable_query_type_is_registered(table: KindTable[Any], name: str) -> None:
    assert table.missing() == [], f"{name} missing for these query types"


def test_every_executable_query_type_has_a_template_in_the_demo_catalog() -> None:
    covered = {qt for _entity, qt in registry(demo_catalog())}
    assert covered == {qt for qt, k in KINDS.items() if k.executable}


def test_every_check_a_kind_names_is_a_verifier_function() -> None:
    assert set(CHECKS) == set(VerifierCheck)
    for kind in KINDS.values():
        for check in (*kind.default_checks, *kind.mandatory_checks, *MANDATORY_CHECKS):
            assert CHECKS[check].__name__ == check.value


def test_a_table_names_what_it_misses() -> None:
    table: KindTable[str] = KindTable("thing", needs=lambda k: k.executable)
    table.add(QueryType.COUNT, "x")
    assert QueryType.LIST in table.missing()
    assert QueryType.UNKNOWN not in table.missing()
    with pytest.raises(ValueError, match="registered twice"):
        table.add(QueryType.COUNT, "y")
    with pytest.raises(LookupError, match="no thing registered for list"):
        table[QueryType.LIST]


def test_a_kinds_plan_spellings_and_question_cues_are_read_from_its_record() -> None:
    from qdsl.dsl.plan import closure
    from qdsl.planner.cues import classify

    for qt, kind in KINDS.items():
        for word in (qt.value, *kind.spellings):
            assert closure.query_type(word) is qt, word
    ranked = [qt for qt, _ in cue_table()]
    # "有多少" is a count, not an existence; "what is the status of" a status, not an explanation
    assert ranked.index(QueryType.COUNT) < ranked.index(QueryType.EXISTENCE)
    assert ranked.index(QueryType.STATUS) < ranked.index(QueryType.EXPLAIN)
    assert classify("有多少个项目") is QueryType.COUNT
    assert classify("what is the status of project 64") is QueryType.STATUS
    assert {qt for qt, k in KINDS.items() if k.cues} == {
        qt for qt, k in KINDS.items() if k.executable
    }


def test_a_word_naming_two_kinds_is_refused() -> None:
    twice = [
        replace(KINDS[QueryType.COUNT], spellings=("tally",)),
        replace(KINDS[QueryType.LIST], spellings=("tally",)),
    ]
    with pytest.raises(ValueError, match="names two query types"):
        spelling_table(twice)


# --- a query kind that exists only in this test -------------------------------

_NEW_KIND = Path(__file__).parent / "new_kind" / "maximum.py.txt"
# Each edit: (file, anchor, text inserted after the anchor's line; None: a new file
# of that text). These are the only changes made to the copy.
_EDITS: tuple[tuple[str, str | None, str], ...] = (
    ("dsl/kinds/names.py", '    COMPARE = "compare"\n', '    MAX = "max"\n'),
    (
        "dsl/kinds/names.py",
        '    COMPARISON_WITH_BASIS = "comparison_with_basis"\n',
        '    MAX_WITH_BASIS = "max_with_basis"\n',
    ),
    ("dsl/kinds/maximum.py", None, _NEW_KIND.read_text(encoding="utf-8")),
    ("dsl/kinds/__init__.py", "    listing,\n", "    maximum,\n"),
    ("dsl/kinds/__init__.py", "    listing.KIND,\n", "    maximum.KIND,\n"),
)
# The folders a wheel installs under `qdsl` (docs/architecture.md, "Layout").
_FOLDERS = {"qdsl": "qdsl", **{name: f"qdsl/{name}" for name in COMPONENTS}}

_SCRIPT = r"""
import sqlite3, sys
from pathlib import Path

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import load_catalog
from qdsl.dsl.ir import QueryType
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.compile import compile_plan
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.secure import secure
from sqlalchemy import text

hr, work = Path(sys.argv[1]), Path(sys.argv[2])
enabled = 'query_types = ["existence", "count", "list", "status", "compare"]\nsorts = ["hired_on"'
toml = (hr / "catalog.toml").read_text(encoding="utf-8")
assert toml.count(enabled) == 1
toml = toml.replace(enabled, enabled.replace('"compare"]', '"compare", "max"]'))
(work / "catalog.toml").write_text(toml, encoding="utf-8")
catalog = load_catalog(work / "catalog.toml")

url = sys.argv[3] if len(sys.argv) > 3 else f"sqlite+pysqlite:///{work / 'hr.sqlite3'}"
more = [
    ("acme", "E-20", "Cara Ng", "sales", 45000.25),
    ("acme", "E-21", "Dev Rao", "sales", 38000.0),
    ("acme", "E-22", "Eli Sun", "sales", 45000.25),  # a tie: both hold the maximum
    ("acme", "E-23", "Fay Wu", "engineering", 120000.0),  # another department
    ("acme", "E-24", "Gil Ma", "sales", None),  # no salary: not a value
    ("globex", "E-30", "Hal Ox", "sales", 99000.0),  # another tenant
]
schema, statement = (hr / "schema.sql").read_text(encoding="utf-8"), ""
setup = make_engine(url)
with setup.begin() as conn:
    for line in schema.splitlines(keepends=True):
        if line.startswith("--"):
            continue
        statement += line
        if sqlite3.complete_statement(statement):
            conn.exec_driver_sql(statement.strip().rstrip(";"))
            statement = ""
    conn.execute(
        text("INSERT INTO employees VALUES (:t, :i, :n, :d, '2024-01-01', FALSE, :s)"),
        [dict(zip("tinds", row)) for row in more],
    )
    rows = conn.execute(
        text("SELECT tenant_id, id, department, monthly_salary FROM employees")
    ).fetchall()
upgrade(url)
if setup.dialect.name == "postgresql":
    # as a deployer runs `qdsl db secure`: the reader role and its row-level security
    secure(setup, catalog, reader=READER_ROLE, apply=True)
refresh_index(setup, catalog)
setup.dispose()
engine = make_engine(url)


def oracle(tenant, department):
    mine = [(i, s) for t, i, d, s in rows if t == tenant and d == department and s is not None]
    top = max(s for _, s in mine)
    return float(top), {i for i, s in mine if s == top}

peak = QueryType("max")
for tenant, department, question in (
    ("acme", "sales", "what is the maximum monthly salary of employees in sales"),
    ("acme", "sales", "销售部员工的最高月薪是多少"),
    ("globex", "sales", "what is the highest monthly salary of employees in sales"),
    ("acme", "engineering", "what is the maximum monthly salary of employees in engineering"),
):
    res = plan_and_answer(question, tenant, engine=engine, options=AnswerOptions(catalog=catalog))
    assert res.status == "answered", (question, res.status, res.text, res.verdict)
    assert res.query_type is peak and res.answer_contract.value == "max_with_basis", res
    value, holders = oracle(tenant, department)
    assert res.data["value"] == value, (question, res.data, value)
    assert set(res.data["holders"]) == holders, (question, res.data, holders)
    assert res.data["field"] == "monthly_salary"
    assert [b["field"] for b in res.data["basis"]] == ["department"], res.data
    assert res.verdict.ok and "consistent_with_result" in res.verdict.checks_run
    assert all(f"[employee:{h}]" in res.text for h in holders), res.text
    print(tenant, department, value, sorted(holders), res.text)

plan = compile_source(
    'max employee where department = "sales" select monthly_salary', catalog, None
).plan
dialect = engine.dialect.name
sql = [s.sql for s in compile_plan(plan, catalog, dialect, tenant_id="acme").statements]
bound = "?" if dialect == "sqlite" else "%(tenant_id)s"
assert "max(employees.monthly_salary)" in sql[0], sql
assert all(f"employees.tenant_id = {bound}" in q for q in sql), sql
print("ok", dialect, len(sql))
"""


def _copy_tree(tmp: Path) -> Path:
    """The tree as the wheel lays it out (one package, `qdsl`), copied file by file."""
    root = tmp / "tree"
    for folder, target in _FOLDERS.items():
        shutil.copytree(ROOT / folder, root / target, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "qdsl" / "migrations").symlink_to(ROOT / "alembic")
    return root


def _apply(root: Path, edits: tuple[tuple[str, str | None, str], ...]) -> None:
    for rel, anchor, text in edits:
        path = root / "qdsl" / rel.removeprefix("qdsl/")
        if anchor is None:
            assert not path.exists(), f"{rel} exists already"
            path.write_text(text, encoding="utf-8")
            continue
        source = path.read_text(encoding="utf-8")
        assert source.count(anchor) == 1, f"anchor not unique in {rel}: {anchor!r}"
        path.write_text(source.replace(anchor, anchor + text), encoding="utf-8")


def _touched(root: Path) -> set[str]:
    """Every file of the copy that differs from the tree, or is new there."""
    out: set[str] = set()
    for folder, target in _FOLDERS.items():
        for path in (root / target).rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(root / target)
            if folder == "qdsl" and rel.parts[0] in (*COMPONENTS, "migrations"):
                continue  # the components are compared as folders of their own
            theirs = ROOT / folder / rel
            if not theirs.exists() or not filecmp.cmp(path, theirs, shallow=False):
                out.add(f"{folder}/{rel}")
    return out


def _run(root: Path, tmp: Path, url: str | None = None) -> subprocess.CompletedProcess[str]:
    work = tmp / "work"
    work.mkdir()
    env = {**os.environ, "QDSL_STATE_DIR": str(tmp / "state"), "PYTHONPATH": str(root)}
    for name in ("QDSL_CATALOG", "QDSL_NOW", "QDSL_DB"):
        env.pop(name, None)
    hr = ROOT / "tests" / "deployments" / "hr"
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(hr), str(work), *([url] if url else [])],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def new_kind_db(request: pytest.FixtureRequest) -> str | None:
    """None: the script's own SQLite file; else a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return None
    factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
    return factory()


def test_a_new_query_kind_takes_three_files(tmp_path: Path, new_kind_db: str | None) -> None:
    root = _copy_tree(tmp_path)
    assert _touched(root) == set()
    _apply(root, _EDITS)
    touched = _touched(root)
    assert touched == {"dsl/kinds/names.py", "dsl/kinds/maximum.py", "dsl/kinds/__init__.py"}
    assert len(touched) <= 3
    proc = _run(root, tmp_path, new_kind_db)
    assert proc.returncode == 0, proc.stderr[-4000:]
    dialect = "sqlite" if new_kind_db is None else "postgresql"
    assert proc.stdout.splitlines()[-1] == f"ok {dialect} 2", proc.stdout


@pytest.mark.parametrize(
    "dropped", range(len(_EDITS)), ids=[f"{e[0]}#{i}" for i, e in enumerate(_EDITS)]
)
def test_every_edit_of_the_new_kind_is_needed(tmp_path: Path, dropped: int) -> None:
    root = _copy_tree(tmp_path)
    _apply(root, tuple(e for i, e in enumerate(_EDITS) if i != dropped))
    proc = _run(root, tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "Error" in proc.stderr, proc.stderr[-2000:]


def test_the_answer_comes_from_the_new_kinds_own_statement(tmp_path: Path) -> None:
    """The new module with `min` for `max` in its statement: the oracle catches it, so
    the run above really answers from the kind's own statement and reader."""
    stmt = "sql.func.max(col).label(_VALUE)"
    module = _EDITS[2][2]
    assert module.count(stmt) == 1
    mutant = (_EDITS[2][0], None, module.replace(stmt, stmt.replace(".max(", ".min(")))
    root = _copy_tree(tmp_path)
    _apply(root, (*_EDITS[:2], mutant, *_EDITS[3:]))
    proc = _run(root, tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "AssertionError" in proc.stderr, proc.stderr[-2000:]
