"""Helpers of the `facts load` tests: a fresh database per dialect, the CLI in-process.

The rows use the demo catalog (the CLI's default): entity `project`, fact
field `market_theme`. `facts load` needs qdsl's own tables only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from qdsl.cli.main import cli
from qdsl.facts.db import make_engine, upgrade
from qdsl.facts.tables import semantic_facts


def fresh_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A new database holding qdsl's tables (`qdsl db upgrade`)."""
    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'facts.sqlite3'}"
    else:
        url = str(request.getfixturevalue("pg_database_factory")())
    upgrade(url)
    return url


def fact(entity_id: str = "1", value: str = "港股", **extra: Any) -> dict[str, Any]:
    return {
        "tenant_id": "t1",
        "entity_type": "project",
        "entity_id": entity_id,
        "predicate": "market_theme",
        "value_text": value,
        **extra,
    }


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def cli_load(url: str, path: Path | str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--json", "--db", url, "facts", "load", str(path), *args])


def rejected(result: Result) -> list[dict[str, Any]]:
    """The problems of a `validation/facts_rejected` refusal (exit 3)."""
    assert result.exit_code == 3, (result.exit_code, result.output[-2000:])
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "validation/facts_rejected", error
    problems: list[dict[str, Any]] = error["details"]["problems"]
    return problems


def stored_count(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            count = sa.select(sa.func.count()).select_from(semantic_facts)
            return int(conn.execute(count).scalar_one())
    finally:
        engine.dispose()
