"""docs/deploying.md followed on a schema of the deployer's own that is not the
document's example (issue 23's "done when"): a clinic (tests/deployments/clinic/)
with INTEGER ids, DATE and BOOLEAN columns, a foreign key and a view, on SQLite
and on PostgreSQL.

Every command the document runs for the dialect runs as written, in order, in a
fresh directory, with three substitutions a deployer makes: the `--table`s of
`catalog init` are the clinic's, the URL of `QDSL_DATABASE_URL` is this test's
database, and the document's own questions (about its support desk) are left
out. The edit after `catalog init` is the clinic's reviewed catalog copied over
the draft; the test first checks that the review kept every guess of the draft
(ids, tenants, labels, columns, types, enum values, references) and only added
words, sorts and a fact field. On PostgreSQL the database and its tables belong
to a role created here that is not a superuser (CREATEROLE, as step 0 asks), and
every command runs as that role: it still sees all its rows after `db secure`,
without setting a tenant. Then questions whose answers rest on the DATE,
BOOLEAN and INTEGER-id fields, the foreign key, a fact and the view are asked
for both tenants and checked against rows read with plain sqlite3.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.deploying_doc import doc_commands
from deployments.fixtures import sql_statements
from sqlalchemy.engine import make_url

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts.db import READER_ROLE

CLINIC = Path(__file__).resolve().parents[1] / "deployments" / "clinic"
TABLES = ("doctors", "appointments", "upcoming_visits")
TENANTS = ("northside", "lakeside")

Rows = dict[str, list[dict[str, Any]]]


def _statements() -> list[str]:
    return [s for name in ("schema.sql", "data.sql") for s in sql_statements(CLINIC / name)]


def _oracle_rows() -> Rows:
    """The clinic's rows and facts, read with sqlite3 and json alone (no qdsl)."""
    con = sqlite3.connect(":memory:")
    con.row_factory = sqlite3.Row
    for statement in _statements():
        con.execute(statement)
    rows = {t: [dict(r) for r in con.execute(f"SELECT * FROM {t}")] for t in TABLES}
    con.close()
    lines = (CLINIC / "facts.jsonl").read_text(encoding="utf-8").splitlines()
    rows["facts"] = [json.loads(line) for line in lines]
    return rows


def _counts(url: str) -> dict[str, int]:
    """What the deployer's own role sees, no tenant set (as their application reads)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            count = sa.select(sa.func.count())
            return {
                t: int(conn.execute(count.select_from(sa.table(t))).scalar_one()) for t in TABLES
            }
    finally:
        engine.dispose()


def _create_tables(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in _statements():
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


@contextmanager
def _owner_database(admin_url: str, *, createrole: bool) -> Iterator[str]:
    """A database owned by a new role that is not a superuser, the clinic's tables
    and rows created by that role; its URL (as that role)."""
    suffix = uuid.uuid4().hex[:10]
    role, database = f"clinic_owner_{suffix}", f"qdsl_test_clinic_{suffix}"
    rights = "CREATEROLE NOSUPERUSER NOBYPASSRLS" if createrole else "NOSUPERUSER NOBYPASSRLS"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    # Names are hex digits generated above, not input.
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE ROLE "{role}" LOGIN {rights}'))
        conn.execute(sa.text(f'CREATE DATABASE "{database}" OWNER "{role}"'))
    owner = make_url(admin_url).set(username=role, database=database)
    try:
        _create_tables(owner.render_as_string(hide_password=False))
        yield owner.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
        admin.dispose()


@pytest.fixture
def owner_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The deployer's database, their tables and rows in it, as the deployer's role."""
    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'clinic.sqlite3'}"
        _create_tables(url)
        yield url
        return
    with _owner_database(request.getfixturevalue("pg_admin_url"), createrole=True) as url:
        yield url


def _qdsl(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", *argv],
        capture_output=True,
        check=False,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


def _clinic_tables(argv: list[str]) -> list[str]:
    """`catalog init` as the deployer types it for their own tables."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--table":
            skip = True
        else:
            out.append(arg)
    return [*out, *(a for t in TABLES for a in ("--table", t))]


def _review_kept_the_draft(draft: Catalog, edited: Catalog) -> None:
    entities = {"doctor", "appointment", "upcoming_visit"}
    assert set(draft.entities) == set(edited.entities) == entities
    for name, guessed in draft.entities.items():
        kept = edited.entities[name]
        assert (kept.table, kept.id, kept.tenant, kept.label) == (
            guessed.table, guessed.id, guessed.tenant, guessed.label
        ), name
        for field_name, field in guessed.fields.items():
            mine = kept.fields[field_name]
            assert (mine.column, mine.type, mine.values, mine.references) == (
                field.column, field.type, field.values, field.references
            ), f"{name}.{field_name}"
        added = set(kept.fields) - set(guessed.fields)
        assert all(kept.fields[f].fact is not None for f in added), (name, added)
    # the foreign key and the view's `<x>_id` both became references
    assert draft.entities["appointment"].fields["doctor_id"].references == "doctor"
    assert draft.entities["upcoming_visit"].fields["doctor_id"].references == "doctor"


def _follow_the_document(dialect: str, url: str, workdir: Path, env: dict[str, str]) -> None:
    for command in doc_commands(dialect):
        head, *args = command.argv
        if head == "export":
            for assignment in args:
                key, _, value = assignment.partition("=")
                env[key] = url if key == "QDSL_DATABASE_URL" else value
            continue
        assert head == "qdsl", f"docs/deploying.md may only run qdsl: {command.argv}"
        if args[:1] == ["ask"]:
            continue  # the document's questions are about its support desk
        if args[:2] == ["catalog", "init"]:
            args = _clinic_tables(args)
        done = _qdsl(args, env, workdir)
        assert done.returncode == 0, (command.argv, done.stdout, done.stderr)
        if args[:2] == ["catalog", "init"]:
            draft = workdir / args[args.index("--out") + 1]
            _review_kept_the_draft(load_catalog(draft), load_catalog(CLINIC / "catalog.toml"))
            shutil.copyfile(CLINIC / "catalog.toml", draft)


def _ask(question: str, tenant: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    done = _qdsl(["--json", "ask", "--tenant", tenant, question], env, cwd)
    assert done.returncode == 0, (question, done.stdout, done.stderr)
    data: dict[str, Any] = json.loads(done.stdout)["data"]
    assert data["status"] == "answered", (question, tenant, data["text"])
    return data


def _expected(rows: Rows, tenant: str) -> dict[str, Callable[[dict[str, Any]], object]]:
    """Per question, what its answer must hold for `tenant`, from the oracle's rows."""

    def of(table: str) -> list[dict[str, Any]]:
        return [r for r in rows[table] if r["tenant_id"] == tenant]

    appointments, doctors, visits = of("appointments"), of("doctors"), of("upcoming_visits")
    checkups = {
        int(f["entity_id"])
        for f in rows["facts"]
        if f["tenant_id"] == tenant and f["predicate"] == "reason" and f["value_text"] == "Checkup"
    }
    third = next(a for a in appointments if a["id"] == 3)
    first_licensed = min(doctors, key=lambda d: d["licensed_on"])
    last_date = max(d["licensed_on"] for d in doctors)
    last_licensed = {d["id"] for d in doctors if d["licensed_on"] == last_date}
    return {
        # BOOLEAN
        "How many telehealth appointments are there?": (
            lambda a: a["count"] == sum(bool(r["telehealth"]) for r in appointments)
        ),
        "有多少个远程问诊的预约": (
            lambda a: a["count"] == sum(bool(r["telehealth"]) for r in appointments)
        ),
        "Which doctors are accepting new patients?": (
            lambda a: {int(i["id"]) for i in a["items"]}
            == {d["id"] for d in doctors if d["accepting"]}
        ),
        # DATE
        "How many appointments are scheduled before 2026-03-01?": (
            lambda a: a["count"] == sum(r["scheduled_on"] < "2026-03-01" for r in appointments)
        ),
        "Which doctor has the earliest license date?": (
            lambda a: [int(i["id"]) for i in a["items"]] == [first_licensed["id"]]
            and a["items"][0]["licensed_on"] == first_licensed["licensed_on"]
        ),
        # every doctor licensed on the latest date: two in northside, none picked
        "Who was licensed most recently?": (
            lambda a: {int(i["id"]) for i in a["items"]} == last_licensed
            and all(i["licensed_on"] == last_date for i in a["items"])
        ),
        # INTEGER id, and the foreign key
        "What is the status of appointment 3?": (
            lambda a: a["entity"]["id"] == "3"
            and a["entity"]["status"] == third["status"]
            and a["entity"]["scheduled_on"] == third["scheduled_on"]
            and a["entity"]["telehealth"] is bool(third["telehealth"])
        ),
        "How many appointments does doctor 3 have?": (
            lambda a: a["count"] == sum(r["doctor_id"] == 3 for r in appointments)
        ),
        # a fact loaded by `facts load`
        "Which appointments are for a checkup?": (
            lambda a: {int(i["id"]) for i in a["items"]} == checkups
        ),
        # the view
        "How many upcoming visits are there?": lambda a: a["count"] == len(visits),
        "How many upcoming visits are telehealth?": (
            lambda a: a["count"] == sum(bool(r["telehealth"]) for r in visits)
        ),
        "Which upcoming visits are with doctor 2?": (
            lambda a: {int(i["id"]) for i in a["items"]}
            == {r["id"] for r in visits if r["doctor_id"] == 2}
        ),
    }


def test_the_clinic_is_a_schema_of_every_shape_the_done_when_names() -> None:
    schema = (CLINIC / "schema.sql").read_text(encoding="utf-8")
    for shape in ("INTEGER NOT NULL", "DATE NOT NULL", "BOOLEAN NOT NULL", "FOREIGN KEY",
                  "CREATE VIEW"):
        assert shape in schema
    rows = _oracle_rows()
    # both tenants hold rows under the same ids: an answer of the other tenant shows
    assert {r["id"] for r in rows["doctors"] if r["tenant_id"] == "northside"} & {
        r["id"] for r in rows["doctors"] if r["tenant_id"] == "lakeside"
    }
    for tenant in TENANTS:
        # the superlative asked below has one answer per tenant, not a tie
        dates = sorted(d["licensed_on"] for d in rows["doctors"] if d["tenant_id"] == tenant)
        assert dates[0] != dates[1]
    # ...and the latest license date is a tie in one tenant and not in the other
    latest = {
        t: sorted((d["licensed_on"] for d in rows["doctors"] if d["tenant_id"] == t), reverse=True)
        for t in TENANTS
    }
    assert latest["northside"][0] == latest["northside"][1]
    assert latest["lakeside"][0] != latest["lakeside"][1]


@pytest.mark.parametrize("dialect", ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def test_following_the_document_on_the_clinic(
    dialect: str, owner_url: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "clinic"
    workdir.mkdir()
    shutil.copyfile(CLINIC / "facts.jsonl", workdir / "facts.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    env["QDSL_STATE_DIR"] = str(tmp_path / "state")
    rows = _oracle_rows()
    totals = {t: len(rows[t]) for t in TABLES}
    assert _counts(owner_url) == totals

    _follow_the_document(dialect, owner_url, workdir, env)

    # the deployer's own role, the owner, still sees every row without a tenant
    assert _counts(owner_url) == totals
    check = _qdsl(["--json", "catalog", "check"], env, workdir)
    assert check.returncode == 0 and json.loads(check.stdout)["data"]["errors"] == 0, check.stdout
    for tenant in TENANTS:
        for question, holds in _expected(rows, tenant).items():
            data = _ask(question, tenant, env, workdir)
            assert holds(data["answer"]), (tenant, question, data["text"], data["answer"])
            if "upcoming visits" in question:
                # the view's entity is named in words, not by its key (upcoming_visits)
                assert "upcoming visit" in data["text"], data["text"]


@pytest.mark.pg
def test_an_owner_that_cannot_grant_the_reader_is_told_what_to_ask_for(
    pg_admin_url: str, tmp_path: Path
) -> None:
    """Step 0: without CREATEROLE the owner cannot make itself a member of the
    cluster-wide reader role; `db secure` says what to have a superuser run, and
    after that grant the document's steps go on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    env["QDSL_STATE_DIR"] = str(tmp_path / "state")
    shutil.copyfile(CLINIC / "catalog.toml", tmp_path / "catalog.toml")
    with _owner_database(pg_admin_url, createrole=False) as url:
        env.update(QDSL_DATABASE_URL=url, QDSL_CATALOG="catalog.toml")
        assert _qdsl(["db", "upgrade"], env, tmp_path).returncode == 0
        refused = _qdsl(["--json", "db", "secure"], env, tmp_path)
        assert refused.returncode == 8, refused.stderr
        error = json.loads(refused.stderr)["error"]
        assert error["code"] == "database/secure_failed"
        assert f"GRANT {READER_ROLE} TO <this user>" in error["hint"]
        role = make_url(url).username
        admin = sa.create_engine(pg_admin_url)
        try:
            with admin.begin() as conn:
                conn.execute(sa.text(f'GRANT "{READER_ROLE}" TO "{role}"'))
        finally:
            admin.dispose()
        secured = _qdsl(["db", "secure"], env, tmp_path)
        assert secured.returncode == 0, secured.stderr
        assert _counts(url) == {t: len(_oracle_rows()[t]) for t in TABLES}
