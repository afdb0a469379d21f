"""docs/deploying.md, followed literally on SQLite and PostgreSQL.

The commands come from the document's fenced `sh` blocks (a block marked
`sh sqlite` or `sh postgresql` runs on that database only) and run in order,
as a deployer would type them, in a fresh directory. Three things stand in for
the deployer: their own tables and rows exist before step 1 (the support desk
of tests/deployments/tickets/), their facts file is the desk's `facts.jsonl`
(in the `facts load` format, as a deployer writes it), and the edit after
`catalog init` is the desk's catalog copied over the draft. On PostgreSQL the
URL of `QDSL_DATABASE_URL` is this test's own database. Each `text` block after
a command is that command's expected answer: its status line, and the numbers
and ids its answer names.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from deployments.deploying_doc import doc_commands
from deployments.fixtures import TICKETS_CATALOG, TICKETS_DIR, sql_statements

from qdsl.dsl.catalog import load_catalog

# Numbers and ids an answer names; evidence pointers ([fact:3]) are left out.
TOKENS = re.compile(r"[A-Z]+-\d+|\d+(?:\.\d+)?")
EVIDENCE = re.compile(r"\[[a-z_]+:[^\]]*\]")


def _answer_tokens(text: str) -> tuple[str, set[str]]:
    lines = text.strip().splitlines()
    return lines[0], set(TOKENS.findall(EVIDENCE.sub("", lines[1])))


def _desk_tables(url: str) -> None:
    """The deployer's own tables and rows, there before step 1."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql("SET LOCAL TIME ZONE 'UTC'")
            for name in ("schema.sql", "data.sql"):
                for statement in sql_statements(TICKETS_DIR / name):
                    conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


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


def test_the_document_has_the_commands_it_promises() -> None:
    sqlite = [c.argv[:3] for c in doc_commands("sqlite")]
    postgresql = [c.argv[:3] for c in doc_commands("postgresql")]
    for step in (
        ["qdsl", "db", "upgrade"],
        ["qdsl", "catalog", "init"],
        ["qdsl", "catalog", "check"],
        ["qdsl", "facts", "load"],
        ["qdsl", "index", "refresh"],
    ):
        assert step in sqlite and step in postgresql
    assert ["qdsl", "db", "secure"] in postgresql and ["qdsl", "db", "secure"] not in sqlite
    assert sum(c.expected is not None for c in doc_commands("sqlite")) >= 3


@pytest.mark.parametrize("dialect", ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def test_following_the_document(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    workdir = tmp_path / "desk"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    env["QDSL_STATE_DIR"] = str(tmp_path / "state")
    if dialect == "postgresql":
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        own_url = factory()
    else:
        own_url = f"sqlite:///{workdir / 'desk.sqlite3'}"
    _desk_tables(own_url)
    shutil.copyfile(TICKETS_DIR / "facts.jsonl", workdir / "facts.jsonl")
    answered = 0
    for command in doc_commands(dialect):
        head, *args = command.argv
        if head == "export":
            for assignment in args:
                key, _, value = assignment.partition("=")
                if key == "QDSL_DATABASE_URL" and dialect == "postgresql":
                    assert value.startswith("postgresql")
                    value = own_url
                env[key] = value
            continue
        assert head == "qdsl", f"docs/deploying.md may only run qdsl: {command.argv}"
        done = _qdsl(args, env, workdir)
        assert done.returncode == 0, (command.argv, done.stdout, done.stderr)
        if args[:2] == ["catalog", "init"]:
            # The deployer reviews and edits the draft: the desk's edited catalog.
            draft = workdir / args[args.index("--out") + 1]
            assert set(load_catalog(draft).entities) == {"ticket", "agent", "kb_article"}
            shutil.copyfile(TICKETS_CATALOG, draft)
        if command.expected is not None:
            assert _answer_tokens(done.stdout) == _answer_tokens(command.expected), done.stdout
            answered += 1
    assert answered >= 3
    # The database really was prepared by the document's commands.
    check = _qdsl(["--json", "catalog", "check"], env, workdir)
    assert check.returncode == 0 and json.loads(check.stdout)["data"]["errors"] == 0


def test_the_desks_facts_file_is_used_as_written() -> None:
    """`facts load` upserts on (tenant, entity type, entity id, predicate, source ref):
    the file gives each fact its own key, so nothing is rewritten before loading."""
    keys = [
        tuple(row[k] for k in ("tenant_id", "entity_type", "entity_id", "predicate", "source_ref"))
        for row in map(json.loads, (TICKETS_DIR / "facts.jsonl").read_text("utf-8").splitlines())
    ]
    assert keys and len(keys) == len(set(keys))
