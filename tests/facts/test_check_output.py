"""`catalog check` findings a deployer can act on without reading code.

Before: every tenant of every entity printed its own identical "not built"
row without naming the index, and a rule that failed with a qdsl error put
the error's "hint:" line into its message, breaking the table in two.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.errors import UsageError
from qdsl.facts.check import Finding, Level, check_catalog
from qdsl.facts.check.findings import CheckContext
from qdsl.facts.db import make_engine
from qdsl.facts.demo.setup import ensure_demo
from tests.facts.parcels import CATALOG_TOML, fresh_parcels, write_catalog


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite+pysqlite:///{tmp_path_factory.mktemp('check') / 'demo.sqlite3'}"
    ensure_demo(url)
    return url


def test_each_index_is_named_once_with_its_tenants(demo_url: str) -> None:
    engine = make_engine(demo_url)
    try:
        found = [f for f in check_catalog(engine, demo_catalog()).findings if f.rule == "indexes"]
    finally:
        engine.dispose()
    assert found
    repeated = [m for m, n in Counter(f.message for f in found).items() if n > 1]
    assert repeated == []
    for f in found:
        assert f.message.startswith(("text index of ", "value index of ")), f.message
        assert f.details["name"] in f.message
        assert f.details["tenants"] and all(repr(t) in f.message for t in f.details["tenants"])
    values = [f for f in found if f.details["index"] == "values"]
    assert values, [f.message for f in found]
    for f in values:
        assert f.message.startswith(f"value index of {f.entity}.{f.details['field']}: ")
    texts = [f for f in found if f.details["index"] == "text"]
    spec = demo_catalog().entities[texts[0].entity]
    assert texts[0].message.startswith(
        f"text index of {texts[0].entity} ({', '.join(spec.text_search)}): "
    )
    # three demo tenants, one row per index and state
    assert {len(f.details["tenants"]) for f in found} == {3}


def _failing(ctx: CheckContext) -> list[Finding]:
    raise UsageError(
        "broken", "the rule met a broken thing", hint="fix the thing\nthen run it again"
    )


def _two_lines(ctx: CheckContext) -> list[Finding]:
    return [Finding("two_lines", Level.WARNING, "first line\n\nsecond line", "do\nthis")]


def test_a_findings_text_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite+pysqlite:///{tmp_path / 'p.sqlite3'}"
    engine = fresh_parcels(url)
    try:
        from tests.facts.parcels import parcels_catalog

        report = check_catalog(engine, parcels_catalog(tmp_path), rules=(_failing, _two_lines))
    finally:
        engine.dispose()
    crashed, flat = report.findings
    assert crashed.message == ("the rule could not run: usage/broken: the rule met a broken thing")
    assert crashed.fix == "fix the thing; then run it again"
    assert "hint:" not in crashed.message
    assert (flat.message, flat.fix) == ("first line; second line", "do; this")


def test_catalog_check_json_for_ci(tmp_path: Path) -> None:
    url = f"sqlite+pysqlite:///{tmp_path / 'p.sqlite3'}"
    fresh_parcels(url).dispose()
    broken = CATALOG_TOML.replace('column = "carrier"', 'column = "courier"')
    path = write_catalog(tmp_path, broken)
    res = CliRunner().invoke(
        cli, ["--json", "--db", url, "--catalog", str(path), "catalog", "check"]
    )
    assert res.exit_code == 3
    envelope = json.loads(res.stdout)
    assert envelope["operation"] == "catalog check" and envelope["data"]["ok"] is False
    errors = [f for f in envelope["data"]["findings"] if f["level"] == "error"]
    assert errors and all({"rule", "message", "fix"} <= f.keys() for f in errors)
    assert any("courier" in f["message"] for f in errors)
    human = CliRunner().invoke(cli, ["--db", url, "--catalog", str(path), "catalog", "check"])
    rows = human.stdout.splitlines()[2:]
    assert rows and all(r.split()[0] in ("error", "warning", "info") for r in rows), rows
