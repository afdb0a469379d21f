"""The tables `ask` prints for a person: one column per value, none repeated."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from deployments.small import STAFF, build

from qdsl.cli.answer_tables import answer_blocks
from qdsl.cli.main import cli
from qdsl.cli.tables import Table


def _columns(answer: dict[str, object]) -> tuple[str, ...]:
    (table,) = answer_blocks(answer)
    assert isinstance(table, Table)
    return table.columns


def test_the_label_is_not_repeated_beside_its_own_column() -> None:
    # issue 23: `ask` showed `label` and the name column with the same text
    items = [
        {"id": "E-1", "label": "Alice Wang", "full_name": "Alice Wang", "city": "shanghai"},
        {"id": "E-2", "label": "Bo Li", "full_name": "Bo Li", "city": "beijing"},
    ]
    assert _columns({"items": items, "total": 2}) == ("id", "full_name", "city")


def test_the_label_stays_when_no_column_holds_it() -> None:
    items = [{"id": "E-1", "label": "Alice Wang", "city": "shanghai"}]
    assert _columns({"items": items, "total": 1}) == ("id", "label", "city")
    # a column equal to the label on one row only is another value, not the label
    items = [
        {"id": "E-1", "label": "Alice Wang", "alias": "Alice Wang"},
        {"id": "E-2", "label": "Bo Li", "alias": "Bobby"},
    ]
    assert _columns({"items": items, "total": 2}) == ("id", "label", "alias")


def _plan(*filters: tuple[str, str, object]) -> dict[str, object]:
    return {"filters": [{"field": f, "operator": op, "value": v} for f, op, v in filters]}


def test_the_fields_filtered_on_stand_beside_the_label() -> None:
    # issue 23: `ask` did not show the field the question filtered on
    items = [
        {"id": "E-1", "label": "Alice Wang", "name": "Alice Wang", "level": "senior",
         "city": "shanghai"},
        {"id": "E-7", "label": "Gao Yan", "name": "Gao Yan", "level": "senior",
         "city": "shanghai"},
    ]
    plan = _plan(("city", "equals", "shanghai"), ("remote", "equals", True))
    (table,) = answer_blocks({"items": items, "total": 2}, plan)
    assert isinstance(table, Table)
    # city moved beside the name; remote, not in the rows, shown with the condition's
    # value: every row of a verified answer holds it
    assert table.columns == ("id", "name", "city", "remote", "level")
    assert table.rows[0] == ("E-1", "Alice Wang", "shanghai", "yes", "senior")


def test_a_condition_that_does_not_state_each_rows_value_adds_no_column() -> None:
    items = [{"id": "7", "label": "Maya Ross", "status": "booked"}]
    plan = _plan(("scheduled_on", "lt", "2026-03-01"), ("doctor_id", "in", ["2", "3"]))
    assert _columns({"items": items, "total": 1}) == ("id", "label", "status")
    (table,) = answer_blocks({"items": items, "total": 1}, plan)
    assert isinstance(table, Table) and table.columns == ("id", "label", "status")
    # ...but a row that carries the field shows it beside the label
    items = [{"id": "7", "label": "Maya Ross", "status": "booked", "scheduled_on": "2026-02-11"}]
    (table,) = answer_blocks({"items": items, "total": 1}, plan)
    assert isinstance(table, Table)
    assert table.columns == ("id", "label", "scheduled_on", "status")


def test_an_existence_answer_shows_its_condition_beside_each_match(tmp_path: Path) -> None:
    """On a terminal, as a person runs it: the demo's fact field beside the title."""
    drawn = _on_a_terminal(["ask", "--tenant", "t1", "Are there any A-share projects?"], tmp_path)
    drawn = re.sub(r"\x1b\[[0-9;]*m", "", drawn)  # rich's bold header
    header = next(line for line in drawn.splitlines() if "market_theme" in line)
    cells = [c.strip() for c in header.strip("┃│ ").replace("┃", "│").split("│")]
    assert cells == ["id", "label", "market_theme"]
    assert drawn.count("A股") >= 7


def test_ask_on_a_second_catalog_shows_its_conditions_beside_the_name(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'staff.sqlite3'}"
    build(STAFF, url)
    res = CliRunner().invoke(
        cli,
        ["--db", url, "--catalog", str(STAFF / "catalog.toml"), "ask", "--tenant", "acme",
         "上海的初级员工有哪些"],
    )
    lines = res.stdout.splitlines()
    assert lines[0] == "[answered] entity_list", res.stdout
    header = lines[lines.index("items") + 1].split()
    assert header[:4] == ["id", "name", "city", "level"]


def _on_a_terminal(args: list[str], state: Path) -> str:
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "QDSL_STATE_DIR": str(state), "COLUMNS": "200", "NO_COLOR": "1"}
    for name in ("QDSL_DATABASE_URL", "QDSL_CATALOG"):
        env.pop(name, None)
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
    proc.wait(timeout=600)
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", errors="replace")
