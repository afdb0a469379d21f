"""The HR deployment (tests/deployments/hr): ordinary column types answer end to end.

Rows of issue 20: on PostgreSQL every status, compare and `select hired_on`
plan on a `DATE` column failed with `internal/unexpected` ('datetime.date'
object has no attribute 'tzinfo'), and any plan on a table whose id is
`INTEGER` failed (exit 1 on SQLite, exit 8 on PostgreSQL), while `catalog check`
reported nothing. Here both dialects answer them (the Python API and the CLI),
dates written as dates, yes/no fields in the answer's language, integer ids in
their own order, and `catalog check` passes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures import sql_statements
from sqlalchemy import Engine

import qdsl
from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts.check import check_catalog
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.secure import secure

HR = Path(__file__).parent / "hr"
CATALOG = HR / "catalog.toml"


def _build(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for stmt in sql_statements(HR / "schema.sql"):
                conn.exec_driver_sql(stmt)
        upgrade(url)
        catalog = load_catalog(CATALOG)
        if engine.dialect.name == "postgresql":
            secure(engine, catalog, reader=READER_ROLE, apply=True)
        refresh_index(engine, catalog)
    finally:
        engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def hr_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('hr') / 'hr.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    _build(url)
    return url


@pytest.fixture(scope="module")
def hr_engine(hr_url: str) -> Iterator[Engine]:
    engine = make_engine(hr_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def hr_catalog() -> Catalog:
    return load_catalog(CATALOG)


def _ask(question: str, tenant: str, engine: Engine, catalog: Catalog) -> qdsl.AnswerResult:
    return qdsl.plan_and_answer(
        question, tenant, engine=engine, options=qdsl.AnswerOptions(catalog=catalog)
    )


def test_status_of_an_employee_with_a_date_column(hr_engine: Engine, hr_catalog: Catalog) -> None:
    zh = _ask("员工 E-4 现在什么状态", "acme", hr_engine, hr_catalog)
    assert zh.status == "answered", (zh.status, zh.error, zh.text)
    assert "入职日期：2025-03-01" in zh.text and "T00:00" not in zh.text
    assert "远程办公：是" in zh.text and "月薪：52000.5" in zh.text
    assert zh.data["entity"]["hired_on"] == "2025-03-01"
    assert zh.data["entity"]["remote"] is True
    en = _ask("What is the status of employee E-4?", "acme", hr_engine, hr_catalog)
    assert en.status == "answered", (en.status, en.error, en.text)
    assert "hired on: 2025-03-01" in en.text and "remote: yes" in en.text
    # the other tenant's E-4 is another employee
    other = _ask("员工 E-4 现在什么状态", "globex", hr_engine, hr_catalog)
    assert "Dana Wu" in other.text and "入职日期：2023-05-02" in other.text
    assert "远程办公：否" in other.text


def test_compare_and_a_date_window(hr_engine: Engine, hr_catalog: Catalog) -> None:
    compared = _ask("员工 E-4 和 E-13 有什么区别", "acme", hr_engine, hr_catalog)
    assert compared.status == "answered", (compared.error, compared.text)
    assert "入职日期（E-4: 2025-03-01，E-13: 2024-11-20）" in compared.text
    assert "远程办公（E-4: 是，E-13: 否）" in compared.text
    hired = _ask("2025年入职的员工有哪些", "acme", hr_engine, hr_catalog)
    assert hired.status == "answered", (hired.error, hired.text)
    assert [i["id"] for i in hired.data["items"]] == ["E-4"]


def test_integer_ids_answer_in_their_own_order(hr_engine: Engine, hr_catalog: Catalog) -> None:
    listed = _ask("成员有哪些", "acme", hr_engine, hr_catalog)
    assert listed.status == "answered", (listed.error, listed.text)
    assert [i["id"] for i in listed.data["items"]] == ["4", "9", "10"]
    status = _ask("成员 4 现在什么状态", "acme", hr_engine, hr_catalog)
    assert status.status == "answered" and "Ann" in status.text
    assert "加入日期：2025-03-01" in status.text
    assert "Gus" in _ask("成员 4 现在什么状态", "globex", hr_engine, hr_catalog).text


def _cli(url: str, *args: str) -> tuple[int, dict[str, object]]:
    res = CliRunner().invoke(cli, ["--json", "--db", url, "--catalog", str(CATALOG), *args])
    assert res.stdout.strip(), (res.exit_code, res.stderr, res.exception)
    return res.exit_code, json.loads(res.stdout.strip().splitlines()[-1])


def test_the_cli_answers_and_selects_the_date(hr_url: str) -> None:
    code, out = _cli(hr_url, "ask", "--tenant", "acme", "员工 E-4 现在什么状态")
    assert code == 0, out
    code, out = _cli(
        hr_url, "run", "--tenant", "acme", "--plan", "list employee select id, hired_on"
    )
    assert code == 0, out
    text = json.dumps(out, ensure_ascii=False)
    assert '"hired_on": "2025-03-01"' in text and "T00:00" not in text
    code, out = _cli(hr_url, "run", "--tenant", "acme", "--plan", "list member")
    assert code == 0, out
    data: Any = out["data"]
    assert [i["id"] for i in data["answer"]["items"]] == ["4", "9", "10"]


def test_catalog_check_passes(hr_engine: Engine, hr_catalog: Catalog) -> None:
    report = check_catalog(hr_engine, hr_catalog)
    assert report.ok, [(f.rule, f.message) for f in report.errors]


@pytest.mark.parametrize(
    ("where", "ids"),
    [
        ('id != "E-4"', ["4", "9", "10"]),  # a value no INTEGER id holds excludes nothing
        ('id != "4"', ["9", "10"]),
        ('id != "009"', ["4", "10"]),  # the column's own spelling of 009 is 9
        ('id not in ("E-4", "009")', ["4", "10"]),
        ('id not in ("E-4", "x")', ["4", "9", "10"]),
        ('id = "E-4"', []),
        ('id in ("E-4", "10")', ["10"]),
    ],
)
def test_an_integer_id_excludes_what_it_is_asked_to(
    hr_url: str, where: str, ids: list[str]
) -> None:
    code, out = _cli(hr_url, "run", "--tenant", "acme", "--plan", f"list member where {where}")
    assert code == 0, out
    data: Any = out["data"]
    assert [i["id"] for i in data["answer"]["items"]] == ids
