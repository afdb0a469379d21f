"""`qdsl schema --catalog`: the catalog's own plan schema, the one the LLM planner
uses (issue 23: the command printed the generic schema whatever the catalog)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.catalog import load_catalog
from qdsl.planner.schema import catalog_plan_schema

DEPLOYMENTS = Path(__file__).resolve().parents[1] / "deployments"


def _schema(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    env = {"QDSL_STATE_DIR": str(tmp_path), **(env or {})}
    res = CliRunner().invoke(cli, ["--json", *args, "schema"], env=env)
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)["data"]
    return data


@pytest.mark.parametrize("name", ["staff", "tickets", "handbook"])
def test_with_a_catalog_the_schema_is_the_catalogs_own(tmp_path: Path, name: str) -> None:
    path = DEPLOYMENTS / name / "catalog.toml"
    catalog = load_catalog(path)
    by_option = _schema(tmp_path, "--catalog", str(path))
    assert by_option == catalog_plan_schema(catalog)
    entity = by_option["properties"]["entity_type"]  # type: ignore[index]
    assert set(entity["enum"]) == set(catalog.entities)
    assert _schema(tmp_path, env={"QDSL_CATALOG": str(path)}) == by_option


def test_without_a_catalog_the_schema_is_the_generic_one(tmp_path: Path) -> None:
    from qdsl.dsl.plan.schema import plan_json_schema

    assert _schema(tmp_path) == plan_json_schema()
