"""The CLI for people as well as pipes: global options anywhere, tables on a
terminal, plain text when piped, `compile --literal`, and strict choices."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.cli.tables import Table, render
from qdsl.facts.db import make_engine
from tests.facts.parcels import fresh_parcels, write_catalog


def _env(result: Any) -> dict[str, Any]:
    env: dict[str, Any] = json.loads(result.stdout)
    return env


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "parse", "--plan", "count project"],
        ["parse", "--json", "--plan", "count project"],
        ["parse", "--plan", "count project", "--json"],
    ],
)
def test_json_before_or_after_the_subcommand(args: list[str]) -> None:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0
    assert _env(res)["operation"] == "parse"


def test_db_and_catalog_after_the_subcommand(sqlite_url: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["ask", "--json", "--db", sqlite_url, "--tenant", "t1", "有多少个项目"]
    )
    assert res.exit_code == 0, res.stderr
    assert _env(res)["data"]["answer"]["count"] > 0
    path = write_catalog(tmp_path)
    res = CliRunner().invoke(cli, ["catalog", "--catalog", str(path), "--json"])
    assert list(_env(res)["data"]["entities"]) == ["parcel"]
    # Nested groups too: the option after the group's subcommand.
    res = CliRunner().invoke(
        cli, ["db", "upgrade", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--json"]
    )
    assert res.exit_code == 0 and (tmp_path / "x.db").exists()


def _main(args: list[str]) -> int:
    from qdsl.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


def test_route_mode_banana_is_a_usage_error_and_web_a_policy_refusal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --json after the subcommand still makes the usage error an envelope.
    assert _main(["ask", "--json", "--tenant", "t1", "--route-mode", "banana", "x"]) == 2
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["type"] == "usage" and "banana" in error["message"]
    assert _main(["ask", "--json", "--tenant", "t1", "--route-mode", "web", "x"]) == 6


def test_chain_help_documents_steps_and_jmespath() -> None:
    res = CliRunner().invoke(cli, ["chain", "--help"])
    assert res.exit_code == 0
    for words in ('"op"', '"input"', "JMESPath", "$.steps[0]", "$$.", "refs get"):
        assert words in res.stdout


# -- compile --literal ---------------------------------------------------------------


def _literal(plan: str, dialect: str, tenant: str, catalog: Path | None = None) -> list[str]:
    args = [
        "--json",
        "compile",
        "--literal",
        "--dialect",
        dialect,
        "--tenant",
        tenant,
        "--plan",
        plan,
    ]
    if catalog is not None:
        args = ["--catalog", str(catalog), *args]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.stderr
    return [s["literal_sql"] for s in _env(res)["data"]["statements"]]


def _count(url: str, sql: str) -> int:
    """The count the count template's main statement carries (a window total per row)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            # Pasted as a person would; the literal SQL carries no parameters.
            row = conn.exec_driver_sql(sql).mappings().first()
    finally:
        engine.dispose()
    return int(row["q_total"] or 0) if row is not None else 0


def test_literal_sql_runs_as_pasted_on_the_demo(dialect: str, db_url: str) -> None:
    for tenant in ("t1", "t2"):
        bound = CliRunner().invoke(
            cli,
            [
                "--json",
                "--db",
                db_url,
                "run",
                "--tenant",
                tenant,
                "--plan",
                'count project where status = "active"',
            ],
        )
        expected = _env(bound)["data"]["result"]["count"]
        sql = _literal('count project where status = "active"', dialect, tenant)[0]
        assert f"'{tenant}'" in sql and "'active'" in sql
        assert _count(db_url, sql) == expected


def test_literal_sql_with_ids_read_at_run_time_runs_as_pasted(dialect: str, db_url: str) -> None:
    """Statements bound to the ids an earlier one read (a row's own facts, a large
    page's evidence) show them empty and still run as pasted."""
    plans = ('status project where id = "64"', 'list project where market_theme ~= "A股" limit 150')
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            for plan in plans:
                shown = _literal(plan, dialect, "t1")
                assert len(shown) >= 3  # main, baseline, then facts by id
                for sql in shown:
                    conn.exec_driver_sql(sql).all()
    finally:
        engine.dispose()


def test_literal_sql_quotes_values_by_the_dialect(dialect: str, db_url: str) -> None:
    tenant = "t1' OR '1'='1"
    sql = _literal('count project where title = "O\'Brien"', dialect, tenant)[0]
    assert "'t1'' OR ''1''=''1'" in sql and "o''brien" in sql
    assert _count(db_url, sql) == 0


def test_literal_sql_on_a_second_catalog(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if dialect == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'p.sqlite3'}"
    else:
        url = str(request.getfixturevalue("pg_database_factory")())
    fresh_parcels(url).dispose()
    sql = _literal('count parcel where carrier = "dhl"', dialect, "acme", write_catalog(tmp_path))[
        0
    ]
    assert _count(url, sql) == 2


# -- tables on a terminal, plain text when piped -----------------------------------------


def test_plain_tables_align_wide_characters() -> None:
    table = Table(("id", "label"))
    table.add("1", "港股通")
    table.add("22", "[fact:1] x")
    lines = render([table], tty=False).splitlines()
    assert lines == ["id  label", "1   港股通", "22  [fact:1] x"]


def test_terminal_tables_are_drawn_and_cells_are_not_markup() -> None:
    table = Table(("id", "label"), title="items")
    table.add("1", "[bold]not markup[/bold]")
    drawn = render([table], tty=True)
    assert "┃" in drawn or "│" in drawn
    assert "[bold]not markup[/bold]" in drawn


def _run_on_a_terminal(args: list[str], state: Path) -> str:
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "QDSL_STATE_DIR": str(state), "COLUMNS": "200", "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "qdsl.cli.main", *args],
        stdout=child_fd,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(child_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_catalog_is_a_table_on_a_terminal_and_plain_when_piped(tmp_path: Path) -> None:
    on_tty = _run_on_a_terminal(["catalog", "--entity", "project"], tmp_path)
    assert "┃" in on_tty and "entity" in on_tty and "projects" in on_tty
    piped = CliRunner().invoke(cli, ["catalog", "--entity", "project"])
    assert "┃" not in piped.stdout
    assert piped.stdout.splitlines()[1].split()[:3] == ["entity", "table", "id"]


def test_version_and_piped_refs_list_do_not_load_rich(tmp_path: Path) -> None:
    probe = (
        "import sys\nfrom qdsl.cli.main import main\n"
        "for args in (['--version'], ['refs', 'list']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print('rich' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "QDSL_STATE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stderr.strip().splitlines()[-1] == "False"


def test_answers_are_tables_when_piped(sqlite_url: str) -> None:
    res = CliRunner().invoke(cli, ["--db", sqlite_url, "ask", "--tenant", "t1", "系统里有哪些项目"])
    lines = res.stdout.splitlines()
    assert lines[0] == "[answered] entity_list"
    header = lines.index("items") + 1
    # the label is the title column here: shown once, under the column's own name
    assert lines[header].split()[:3] == ["id", "title", "status"]
    assert "label" not in lines[header].split()


def test_facts_stats_is_a_table_when_piped(tickets_sqlite_url: str) -> None:
    res = CliRunner().invoke(cli, ["facts", "stats", "--db", tickets_sqlite_url])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split()[:6] == ["tenant", "entity", "type", "predicate", "rows", "stale"]
    assert lines[1].split()[:3] == ["acme", "ticket", "product_area"]
