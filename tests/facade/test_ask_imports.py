"""`qdsl ask` over SQLite imports only what its path needs (issue 24, item 4).

A person or an agent host runs `qdsl ask` as a fresh process, so every module
it imports is paid on every question. This pins, without timing anything, the
modules the rule planner's path over a SQLite database must not load: the LLM
planner and its prompt, the plan parsers (a question's plan is never text), the
PostgreSQL dialect and driver, the MCP SDK, rich (piped output), Alembic (an
up-to-date database), and the libraries only other commands use.
`benchmarks/bench_ask_startup.py` measures the wall time this buys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deployments.small import STAFF, build

NOT_ON_THE_ASK_PATH = (
    "qdsl.planner.llm",
    "qdsl.planner.prompt",
    "qdsl.planner.slice",
    "qdsl.dsl.plan.parser",
    "qdsl.dsl.plan.json_form",
    "qdsl.dsl.plan.grammar_cache",
    "qdsl.mcp",
    "sqlalchemy.dialects.postgresql",
    "psycopg",
    "mcp",
    "rich",
    "alembic",
    "hypothesis",
    "jmespath",
    "concurrent.futures.thread",
)

_PROBE = """
import json, sys
from qdsl.cli.fast import main
sys.argv = ["qdsl", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _ask_modules(args: list[str], state: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    env["QDSL_STATE_DIR"] = str(state)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), done.stdout
    assert done.stdout.startswith("[answered]"), done.stdout
    return set(report["modules"])


def _loaded(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_ON_THE_ASK_PATH)
    )


def test_ask_on_the_demo_loads_none_of_them(tmp_path: Path) -> None:
    question = "Are there any A-share projects?"
    _ask_modules(["ask", "--tenant", "t1", question], tmp_path)  # seeds the demo
    modules = _ask_modules(["ask", "--tenant", "t1", question], tmp_path)
    assert _loaded(modules) == []
    # the probe sees what the ask path does load
    assert {"qdsl.pipeline", "qdsl.planner.rule", "sqlalchemy.dialects.sqlite"} <= modules


@pytest.mark.parametrize("question", ["Who has the highest salary?", "上海的初级员工有哪些"])
def test_ask_on_a_deployers_sqlite_database_loads_none_of_them(
    tmp_path: Path, question: str
) -> None:
    url = f"sqlite:///{tmp_path / 'staff.sqlite3'}"
    build(STAFF, url)
    args = ["--db", url, "--catalog", str(STAFF / "catalog.toml"), "ask", "--tenant", "acme"]
    assert _loaded(_ask_modules([*args, question], tmp_path / "state")) == []
