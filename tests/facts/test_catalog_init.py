"""`catalog init` drafts a catalog from the live schema; the draft loads and passes the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from qdsl.cli.main import cli
from qdsl.dsl.catalog import FieldType, load_catalog
from qdsl.facts.check import Level, check_catalog
from qdsl.facts.scaffold import draft_catalog
from tests.facts.parcels import fresh_parcels


@pytest.fixture
def parcels_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if dialect == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'parcels.sqlite3'}"
    else:
        url = str(request.getfixturevalue("pg_database_factory")())
    fresh_parcels(url).dispose()
    return url


def _init(url: str, out: Path, *tables: str) -> dict[str, object]:
    args = ["--json", "--db", url, "catalog", "init", "--out", str(out)]
    for t in tables:
        args += ["--table", t]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)["data"]
    return data


def test_the_parcels_draft_guesses_and_passes_the_check(parcels_url: str, tmp_path: Path) -> None:
    out = tmp_path / "draft.toml"
    _init(parcels_url, out, "parcels")
    catalog = load_catalog(out)
    parcel = catalog.entities["parcel"]
    assert (parcel.table, parcel.id, parcel.tenant, parcel.label) == (
        "parcels",
        "ref",
        "account",
        "title",
    )
    # dhl is acme's alone: an enum would show it to zeta, so the carrier links per tenant
    assert parcel.fields["carrier"].type is FieldType.TEXT
    assert parcel.fields["carrier"].link_values and parcel.fields["carrier"].values == ()
    assert "dhl" not in out.read_text(encoding="utf-8")
    assert parcel.fields["weight_kg"].type is FieldType.NUMBER
    assert parcel.fields["sent_at"].type is FieldType.DATETIME
    assert parcel.fields["recipient_email"].sensitive
    assert parcel.sorts == ("sent_at",)  # the indexed column
    if parcels_url.startswith("postgresql"):
        args = ["--db", parcels_url, "--catalog", str(out), "db", "secure"]
        assert CliRunner().invoke(cli, args).exit_code == 0
    check = ["--db", parcels_url, "--catalog", str(out), "catalog", "check"]
    before = CliRunner().invoke(cli, check)
    assert before.exit_code == 3 and "qdsl index refresh --entity parcel" in before.stdout
    refresh = ["--db", parcels_url, "--catalog", str(out), "index", "refresh"]
    assert CliRunner().invoke(cli, refresh).exit_code == 0
    res = CliRunner().invoke(
        cli, ["--json", "--db", parcels_url, "--catalog", str(out), "catalog", "check"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["data"]["errors"] == 0


def test_the_demo_draft_marks_secrets_sensitive_and_passes(sqlite_url: str, tmp_path: Path) -> None:
    import shutil

    from sqlalchemy.engine import make_url

    # A copy: the draft's indexes are built into it, not into the shared demo database.
    copy = tmp_path / "demo.sqlite3"
    shutil.copyfile(str(make_url(sqlite_url).database), copy)
    sqlite_url = f"sqlite+pysqlite:///{copy}"
    out = tmp_path / "demo-draft.toml"
    data = _init(sqlite_url, out, "projects", "tasks", "configs")
    assert data["entities"] == ["project (projects)", "task (tasks)", "config (configs)"]
    catalog = load_catalog(out)
    assert catalog.entities["project"].sensitive == {"owner_email"}
    assert catalog.entities["config"].sensitive == {"secret_value"}
    assert catalog.entities["project"].fields["status"].values == ("active", "closed", "paused")
    refresh = ["--db", sqlite_url, "--catalog", str(out), "index", "refresh"]
    assert CliRunner().invoke(cli, refresh).exit_code == 0
    res = CliRunner().invoke(
        cli, ["--json", "--db", sqlite_url, "--catalog", str(out), "catalog", "check"]
    )
    assert res.exit_code == 0, res.output


def test_draft_refuses_an_unknown_table_and_a_table_without_tenant(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    from qdsl.dsl.errors import UsageError

    with pytest.raises(UsageError) as unknown:
        draft_catalog(sqlite_engine, ["nope"])
    assert unknown.value.subtype == "unknown_table"
    with pytest.raises(UsageError) as no_tenant:
        draft_catalog(sqlite_engine, ["projects"], tenant_column="missing")
    assert no_tenant.value.subtype == "no_tenant_column"


def test_init_does_not_overwrite_without_force(sqlite_url: str, tmp_path: Path) -> None:
    out = tmp_path / "draft.toml"
    out.write_text("keep", encoding="utf-8")
    args = [
        "--json",
        "--db",
        sqlite_url,
        "catalog",
        "init",
        "--table",
        "projects",
        "--out",
        str(out),
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and out.read_text(encoding="utf-8") == "keep"
    assert CliRunner().invoke(cli, [*args, "--force"]).exit_code == 0
    assert load_catalog(out).entities["project"].table == "projects"


def test_the_draft_of_a_clean_table_has_no_error_findings(sqlite_engine: Engine) -> None:
    import tomllib

    from qdsl.dsl.catalog import catalog_from_mapping

    draft = draft_catalog(sqlite_engine, ["runs", "signals"])
    catalog = catalog_from_mapping(tomllib.loads(draft.toml))
    findings = check_catalog(sqlite_engine, catalog).findings
    assert [f for f in findings if f.level is Level.ERROR] == []
