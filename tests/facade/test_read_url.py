"""The read URL (`--read-db`, QDSL_READ_DATABASE_URL) and the Python API's
`read_engine=`: plans read there, the rest stays on the primary (`--db`,
`engine=`), and a plan requiring fresh facts reads the primary. The MCP
server's are in tests/mcp_server/test_mcp_read_url.py, the replicated
cluster's own tests in tests/scale."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from qdsl.api import AnswerOptions, AnswerResult, aplan_and_answer, plan_and_answer
from qdsl.cli.main import cli
from qdsl.deployment import resolve
from qdsl.dsl.errors import UsageError
from qdsl.facts.db import make_async_engine, make_engine
from qdsl.facts.demo.setup import ensure_demo
from qdsl.planner import LLMPlanner


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[str, str]:
    primary, reader = (f"sqlite+pysqlite:///{tmp_path / name}.sqlite3" for name in "ab")
    ensure_demo(primary)
    ensure_demo(reader)
    return primary, reader


def test_plans_read_the_read_url_and_fresh_ones_the_primary(two_files: tuple[str, str]) -> None:
    primary, reader = two_files
    d = resolve(None, primary, read_url=reader)
    try:
        assert str(d.engine().url).endswith("a.sqlite3")
        assert str(d.read_engine().url).endswith("b.sqlite3")
        assert d.reader_for(False) is d.read_engine()
        assert d.reader_for(True) is d.engine()
    finally:
        d.close()
    alone = resolve(None, primary, read_url="  ")
    assert alone.read_url is None and alone.read_engine() is alone.engine()
    alone.close()


def test_a_read_url_without_a_primary_is_a_usage_error(two_files: tuple[str, str]) -> None:
    with pytest.raises(UsageError) as info:
        resolve(None, None, read_url=two_files[1])
    assert info.value.code == "usage/read_db_without_primary"
    result = CliRunner().invoke(
        cli, ["--json", "--read-db", two_files[1], "ask", "--tenant", "t1", "any projects?"]
    )
    assert result.exit_code == 2
    error = json.loads((result.stderr or result.output).strip().splitlines()[-1])["error"]
    assert error["subtype"] == "read_db_without_primary"


def test_the_cli_reads_the_read_url(two_files: tuple[str, str]) -> None:
    primary, reader = two_files
    # the read database lacks a table the plan reads: the error names it, so the
    # plan ran there, not on the primary
    from sqlalchemy import create_engine, text

    engine = create_engine(reader)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE projects"))
    engine.dispose()
    args = ["--json", "--db", primary, "--read-db", reader, "run", "--tenant", "t1"]
    plan = "count project"
    result = CliRunner().invoke(cli, [*args, "--plan", plan])
    assert result.exit_code == 8, result.output
    fresh = CliRunner().invoke(
        cli, [*args, "--plan", f"{plan} retrieval facts_first, require_fresh_fact"]
    )
    assert fresh.exit_code == 0, fresh.output
    assert json.loads(fresh.stdout)["data"]["answer"]["count"] > 0


# -- the Python API: read_engine= --------------------------------------------------------

QUESTION = "有多少个活跃项目"
PLAN = 'count project where status = "active"'
FRESH_PLAN = f"{PLAN} retrieval facts_first, require_fresh_fact"


def _options(plan: str) -> AnswerOptions:
    return AnswerOptions(planner=LLMPlanner(lambda _prompt: plan))


def test_the_python_api_reads_the_read_engine(two_databases: tuple[str, str]) -> None:
    primary, reader = (make_engine(u) for u in two_databases)
    try:
        on_reader = plan_and_answer(
            QUESTION, "t1", engine=primary, read_engine=reader, options=_options(PLAN)
        )
        fresh = plan_and_answer(
            QUESTION, "t1", engine=primary, read_engine=reader, options=_options(FRESH_PLAN)
        )
        alone = plan_and_answer(QUESTION, "t1", engine=primary, options=_options(PLAN))
    finally:
        primary.dispose()
        reader.dispose()
    assert on_reader.status == "answered" and on_reader.data["count"] == 0, on_reader.text
    assert fresh.status == "answered" and fresh.data["count"] > 0, fresh.text
    assert alone.data["count"] == fresh.data["count"]


def test_the_asyncio_api_reads_the_read_engine(two_databases: tuple[str, str]) -> None:
    async def body() -> tuple[AnswerResult, AnswerResult]:
        primary, reader = (make_async_engine(u) for u in two_databases)
        try:
            on_reader = await aplan_and_answer(
                QUESTION, "t1", engine=primary, read_engine=reader, options=_options(PLAN)
            )
            fresh = await aplan_and_answer(
                QUESTION, "t1", engine=primary, read_engine=reader, options=_options(FRESH_PLAN)
            )
        finally:
            await primary.dispose()
            await reader.dispose()
        return on_reader, fresh

    on_reader, fresh = asyncio.run(body())
    assert on_reader.status == "answered" and on_reader.data["count"] == 0, on_reader.text
    assert fresh.status == "answered" and fresh.data["count"] > 0, fresh.text


def test_a_read_engine_without_a_primary_is_a_usage_error(two_files: tuple[str, str]) -> None:
    reader = make_engine(two_files[1])
    try:
        with pytest.raises(UsageError) as info:
            plan_and_answer(QUESTION, "t1", read_engine=reader)
        assert info.value.code == "usage/read_engine_without_primary"
    finally:
        reader.dispose()

    async def body() -> None:
        areader = make_async_engine(two_files[1])
        try:
            with pytest.raises(UsageError) as ainfo:
                await aplan_and_answer(QUESTION, "t1", read_engine=areader)
            assert ainfo.value.code == "usage/read_engine_without_primary"
        finally:
            await areader.dispose()

    asyncio.run(body())
