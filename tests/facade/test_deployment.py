"""One deployment, resolved in one place (`qdsl.deployment`), and one service the
Python API, the CLI and the MCP server all answer through (`qdsl.service`)."""

from __future__ import annotations

import ast
import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.deployment import Deployment, resolve
from qdsl.dsl.errors import QdslError
from qdsl.facts.demo import DEMO_NOW
from qdsl.service import Service

ROOT = Path(__file__).resolve().parents[2]
# every entry point: the Python API, the CLI and the MCP server (less its token
# file, whose timestamps are no answer's clock)
ENTRY_POINTS = sorted(
    [ROOT / "qdsl/api.py", ROOT / "qdsl/service.py"]
    + list((ROOT / "qdsl/cli").glob("*.py"))
    + [p for p in (ROOT / "qdsl/mcp").glob("*.py") if p.name != "tokens.py"]
)
VOLATILE = {"trace_id", "execution_id", "error"}


def _calls(path: Path, name: str) -> list[str]:
    """Where `path` names `name`: imports it, calls it or reads it off a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        named = (
            (isinstance(node, ast.Attribute) and node.attr == name)
            or (isinstance(node, ast.alias) and node.name == name)
            or (isinstance(node, ast.Name) and node.id == name)
        )
        if named:
            found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    return found


def test_the_default_database_is_chosen_in_one_place() -> None:
    used = [
        hit
        for p in sorted((ROOT / "qdsl").rglob("*.py"))
        for hit in _calls(p, "default_database_url")
    ]
    assert [hit.split(":")[0] for hit in used] == ["qdsl/deployment.py"] * len(used)
    assert len(used) == 2  # its import and its one call


def test_no_entry_point_reads_the_clock_or_the_demo_itself() -> None:
    clocks = [p for p in ENTRY_POINTS if "datetime.now(" in p.read_text(encoding="utf-8")]
    assert clocks == []
    # `qdsl demo` (db_cmds) seeds the demo: the one command that is the demo itself
    demo = [
        p.relative_to(ROOT).as_posix()
        for p in ENTRY_POINTS
        if "qdsl.facts.demo" in p.read_text(encoding="utf-8")
    ]
    assert demo == ["qdsl/cli/db_cmds.py"]
    assert ENTRY_POINTS and any(p.name == "service.py" for p in ENTRY_POINTS)


def test_the_demo_deployment_is_seeded_once_and_judged_by_its_clock() -> None:
    first, second = resolve(), resolve()
    assert first.demo and first.now() == DEMO_NOW
    assert first.engine() is second.engine()  # one seeded engine for the process
    first.close()  # shared: a command's close never disposes it
    assert second.engine() is first.engine()
    with second.engine().connect() as conn:
        assert conn.exec_driver_sql("select count(*) from projects").scalar_one() > 0


def test_the_demo_database_is_looked_up_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    import qdsl.facts.db

    looked: list[int] = []
    real = qdsl.facts.db.default_database_url

    def counted() -> str:
        looked.append(1)
        return real()

    monkeypatch.setattr(qdsl.facts.db, "default_database_url", counted)
    deployment = resolve()
    assert looked == []  # a gated question touches no file
    assert deployment.database() == real() and looked == [1]


def test_the_clock_a_deployment_is_resolved_with(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str
) -> None:
    given = datetime(2026, 3, 1, tzinfo=UTC)
    monkeypatch.setenv("QDSL_NOW", "2025-01-02T03:04:05Z")
    env = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert resolve(now=given).now() == given
    assert resolve(env_now=True).now() == env  # the CLI's and the server's
    assert resolve().now() == DEMO_NOW  # the Python API reads no QDSL_NOW
    assert resolve(db_url=sqlite_url, env_now=True).now() == env
    before = datetime.now(UTC)
    wall = resolve(db_url=sqlite_url).now()
    assert before <= wall <= datetime.now(UTC)
    assert resolve(demo_clock=False).now() >= before
    monkeypatch.setenv("QDSL_NOW", "yesterday")
    with pytest.raises(QdslError) as err:
        resolve(env_now=True)
    assert err.value.code == "usage/bad_now"


def test_a_catalog_file_is_resolved_once_for_every_entry_point(tmp_path: Path) -> None:
    from qdsl.dsl.catalog import demo_catalog

    path = tmp_path / "catalog.toml"
    source = ROOT / "facts/demo/catalog.toml"
    path.write_bytes(source.read_bytes())
    api = AnswerOptions(catalog=str(path)).settings(demo=True).catalog
    assert resolve(str(path)).catalog is api is resolve(path).catalog
    assert resolve().catalog is demo_catalog()


def test_a_named_database_must_exist_when_it_is_first_used(tmp_path: Path) -> None:
    deployment = resolve(db_url=f"sqlite+pysqlite:///{tmp_path / 'missing.sqlite3'}")
    assert not deployment.demo
    with pytest.raises(QdslError) as err:
        deployment.engine()
    assert err.value.code.startswith("database/")
    assert not (tmp_path / "missing.sqlite3").exists()


def test_run_hands_the_executor_the_plan_the_normalizer_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import qdsl.executor.run
    from qdsl.dsl.bound import BoundPlan

    handed: list[object] = []
    real = qdsl.executor.run.execute

    def spy(plan: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(plan)
        return real(plan, *args, **kwargs)

    monkeypatch.setattr(qdsl.executor.run, "execute", spy)
    ran = Service(resolve()).run("count project", "t1")
    assert ran.answer.status == "answered" and ran.now == DEMO_NOW
    assert len(handed) == 1 and isinstance(handed[0], BoundPlan)
    assert ran.data()["result"]["mac"]


def _steady(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in VOLATILE}


@pytest.mark.parametrize("question", ["list all projects", "有多少个进行中的项目", "hello"])
def test_the_api_the_cli_and_the_mcp_server_answer_alike(question: str) -> None:
    from qdsl.cli.main import cli
    from qdsl.mcp.service import ServerConfig
    from qdsl.mcp.service import Service as Server

    api = plan_and_answer(question, "t1").to_dict()
    res = CliRunner().invoke(cli, ["--json", "ask", question, "--tenant", "t1"])
    cli_data = json.loads(res.output)["data"]
    server = Server(ServerConfig())

    async def over_mcp() -> dict[str, Any]:
        server.open()
        try:
            return await server.ask("t1", question)
        finally:
            await server.close()

    mcp_data = asyncio.run(over_mcp())["data"]
    assert _steady(api) == _steady(cli_data) == _steady(mcp_data)
    assert cli_data["error"] is None


def test_the_service_is_one_for_every_adapter() -> None:
    from qdsl.mcp.service import ServerConfig
    from qdsl.mcp.service import Service as Server

    server = Server(ServerConfig())
    assert isinstance(server.deployment, Deployment)
    assert server.ops.deployment is server.deployment
    assert server.catalog is resolve().catalog
