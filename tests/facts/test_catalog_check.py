"""`catalog check` flags each seeded fault and passes on a sound deployment.

Run on a second deployment (tests/facts/parcels.py: its own tables and
catalog) on SQLite and PostgreSQL, and on the demo.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.facts.check import Finding, Level, check_catalog
from qdsl.facts.check.findings import CheckContext
from tests.facts.parcels import CATALOG_TOML, fresh_parcels, parcels_catalog, write_catalog


@pytest.fixture
def parcels_url(dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    if dialect == "sqlite":
        url = f"sqlite+pysqlite:///{tmp_path / 'parcels.sqlite3'}"
    else:
        factory: Callable[[], str] = request.getfixturevalue("pg_database_factory")
        url = factory()
    engine = fresh_parcels(url)
    engine.dispose()
    yield url


@pytest.fixture
def parcels_engine(parcels_url: str) -> Iterator[sa.Engine]:
    from qdsl.facts.db import make_engine

    engine = make_engine(parcels_url)
    yield engine
    engine.dispose()


def _secure(url: str, catalog_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["--json", "--db", url, "--catalog", str(catalog_path), "db", "secure"]
    )
    assert res.exit_code == 0, res.output


def _errors(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.level is Level.ERROR]


def _sound(engine: sa.Engine, url: str, tmp_path: Path) -> Catalog:
    catalog = parcels_catalog(tmp_path)
    if engine.dialect.name == "postgresql":
        _secure(url, write_catalog(tmp_path))
    return catalog


def test_a_sound_deployment_has_no_error(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    catalog = _sound(parcels_engine, parcels_url, tmp_path)
    report = check_catalog(parcels_engine, catalog)
    assert _errors(report.findings) == []
    assert report.ok


def test_missing_column_and_wrong_type(parcels_engine: sa.Engine, tmp_path: Path) -> None:
    text = CATALOG_TOML.replace('column = "weight_kg"', 'column = "weight"').replace(
        'column = "sent_at"\ntype = "datetime"', 'column = "sent_at"\ntype = "number"'
    )
    catalog = parcels_catalog(tmp_path, text)
    found = {(f.rule, f.column) for f in _errors(check_catalog(parcels_engine, catalog).findings)}
    assert ("columns_exist", "weight") in found
    assert ("field_types", "sent_at") in found  # the type is a rule of its own


def test_missing_table(parcels_engine: sa.Engine, tmp_path: Path) -> None:
    catalog = parcels_catalog(
        tmp_path, CATALOG_TOML.replace('table = "parcels"', 'table = "parcel"')
    )
    errors = _errors(check_catalog(parcels_engine, catalog).findings)
    assert any(
        f.rule == "columns_exist" and f.table == "parcel" and f.column is None for f in errors
    )


def test_unlisted_enum_value_and_repeated_id(parcels_engine: sa.Engine, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tests.facts.parcels import parcels

    sent = datetime(2026, 11, 2, tzinfo=UTC)
    row = dict(account="acme", ref="P-9", title="Gift", carrier="FedEx", sent_at=sent)
    with parcels_engine.begin() as conn:
        conn.execute(parcels.insert(), [row, {**row, "carrier": "dhl"}])
    errors = _errors(check_catalog(parcels_engine, parcels_catalog(tmp_path)).findings)
    enum = [f for f in errors if f.rule == "enum_values"]
    assert len(enum) == 1 and enum[0].details["unlisted"] == ["FedEx"] and enum[0].fix
    dup = [f for f in errors if f.rule == "unique_ids"]
    assert len(dup) == 1 and dup[0].details["examples"] == [["acme", "P-9", 2]]


def test_unnormalized_fact_and_missing_predicate(parcels_engine: sa.Engine, tmp_path: Path) -> None:
    with parcels_engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE semantic_facts SET value_norm = value_text WHERE entity_id = 'P-2'")
        )
    text = (
        CATALOG_TOML
        + '\n[entities.parcel.fields.customs]\nfact = "customs"\noperators = ["equals"]\n'
    )
    findings = check_catalog(parcels_engine, parcels_catalog(tmp_path, text)).findings
    unnormalized = [f for f in _errors(findings) if f.rule == "fact_rows"]
    assert len(unnormalized) == 1
    assert unnormalized[0].details["examples"] == [
        {"value_text": "Ｏｓｌｏ", "value_norm": "Ｏｓｌｏ"}
    ]
    empty = [f for f in findings if f.rule == "fact_rows" and f.level is Level.WARNING]
    assert len(empty) == 1 and "customs" in empty[0].message and "facts load" in empty[0].fix


def test_a_crashing_rule_is_a_finding_and_the_others_still_run(
    parcels_engine: sa.Engine, tmp_path: Path
) -> None:
    def exploding(ctx: CheckContext) -> list[Finding]:
        raise RuntimeError("boom")

    def one(ctx: CheckContext) -> list[Finding]:
        return [Finding("one", Level.INFO, "ran", "nothing")]

    report = check_catalog(parcels_engine, parcels_catalog(tmp_path), rules=(exploding, one))
    assert [(f.rule, f.level) for f in report.findings] == [
        ("exploding", Level.ERROR),
        ("one", Level.INFO),
    ]
    assert "RuntimeError: boom" in report.findings[0].message


def test_the_demo_passes_on_sqlite(sqlite_engine: sa.Engine) -> None:
    assert _errors(check_catalog(sqlite_engine, demo_catalog()).findings) == []


def test_cli_exits_3_with_findings_and_each_names_a_fix(parcels_url: str, tmp_path: Path) -> None:
    path = write_catalog(
        tmp_path, CATALOG_TOML.replace('values = ["dhl", "ups"]', 'values = ["dhl"]')
    )
    res = CliRunner().invoke(
        cli, ["catalog", "check", "--json", "--db", parcels_url, "--catalog", str(path)]
    )
    assert res.exit_code == 3, res.output
    env = json.loads(res.stdout)
    assert env["ok"] is True and env["operation"] == "catalog check"
    assert env["data"]["ok"] is False and env["data"]["errors"] >= 1
    assert all(f["fix"] for f in env["data"]["findings"])
    assert any(f["rule"] == "enum_values" for f in env["data"]["findings"])
    plain = CliRunner().invoke(
        cli, ["--db", parcels_url, "--catalog", str(path), "catalog", "check"]
    )
    assert plain.exit_code == 3
    assert plain.stdout.splitlines()[1].split() == ["level", "rule", "where", "finding", "fix"]


# -- PostgreSQL: row-level security and grants ------------------------------------------


def _pg_findings(engine: sa.Engine, catalog: Catalog, reader: str | None = None) -> list[str]:
    report = check_catalog(engine, catalog, reader_role=reader)
    return [f.message for f in report.findings if f.rule == "pg_security"]


@pytest.mark.parametrize("dialect", ["postgresql"], indirect=True)
def test_postgresql_faults_are_flagged_then_fixed_by_db_secure(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    catalog = parcels_catalog(tmp_path)
    before = _pg_findings(parcels_engine, catalog)
    assert "parcels: row-level security is not enabled" in before
    # a deployer's table is never asked to force RLS: that would hide its owner's rows
    assert not any("not forced" in m for m in before if m.startswith("parcels"))
    assert "parcels: no policy lets 'qdsl_reader' see the session tenant's rows" in before
    assert any(m.startswith("parcels: no RESTRICTIVE policy") for m in before)
    assert any(m.startswith("'qdsl_reader' cannot select parcels") for m in before)
    _secure(parcels_url, write_catalog(tmp_path))
    assert _pg_findings(parcels_engine, catalog) == []
    # Idempotent: nothing left to do.
    res = CliRunner().invoke(
        cli,
        [
            "--json",
            "--db",
            parcels_url,
            "--catalog",
            str(write_catalog(tmp_path)),
            "db",
            "secure",
            "--print",
        ],
    )
    assert json.loads(res.stdout)["data"]["statements"] == []


@pytest.mark.parametrize("dialect", ["postgresql"], indirect=True)
def test_owner_as_reader_and_sensitive_grant_are_flagged(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    catalog = parcels_catalog(tmp_path)
    _secure(parcels_url, write_catalog(tmp_path))
    with parcels_engine.begin() as conn:
        conn.execute(sa.text("GRANT SELECT ON parcels TO qdsl_reader"))
    assert _pg_findings(parcels_engine, catalog) == [
        "'qdsl_reader' can read parcels.recipient_email, which the catalog marks sensitive"
    ]
    with parcels_engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE parcels OWNER TO qdsl_reader"))
    assert "parcels is owned by the reader role 'qdsl_reader'" in _pg_findings(
        parcels_engine, catalog
    )
    _secure(parcels_url, write_catalog(tmp_path))
    assert _pg_findings(parcels_engine, catalog) == []


@pytest.mark.parametrize("dialect", ["postgresql"], indirect=True)
def test_missing_grant_is_flagged(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    catalog = parcels_catalog(tmp_path)
    _secure(parcels_url, write_catalog(tmp_path))
    with parcels_engine.begin() as conn:
        conn.execute(sa.text("REVOKE SELECT (title) ON parcels FROM qdsl_reader"))
        conn.execute(sa.text("REVOKE SELECT ON semantic_facts FROM qdsl_reader"))
    found = _pg_findings(parcels_engine, catalog)
    assert "'qdsl_reader' cannot select parcels (title)" in found
    assert any(m.startswith("'qdsl_reader' cannot select semantic_facts (") for m in found)


@pytest.mark.parametrize("dialect", ["postgresql"], indirect=True)
def test_after_db_secure_the_reader_reads_all_but_sensitive_columns(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    _secure(parcels_url, write_catalog(tmp_path))
    with parcels_engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE qdsl_reader"))
        conn.execute(sa.select(sa.func.set_config("app.tenant_id", "acme", True)))
        refs = conn.execute(sa.text("SELECT ref, title, carrier FROM parcels ORDER BY ref")).all()
        assert [r[0] for r in refs] == ["P-1", "P-2", "P-3"]  # zeta's P-1 is not visible
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            conn.execute(sa.text("SELECT recipient_email FROM parcels"))


@pytest.mark.parametrize("dialect", ["postgresql"], indirect=True)
def test_a_bypassrls_reader_is_flagged_and_fixed(
    parcels_engine: sa.Engine, parcels_url: str, tmp_path: Path
) -> None:
    # A role of this test's own: qdsl_reader is shared by every database on the server.
    reader = f"qdsl_reader_{uuid.uuid4().hex[:8]}"
    catalog = parcels_catalog(tmp_path)
    with parcels_engine.begin() as conn:
        conn.execute(sa.text(f'CREATE ROLE "{reader}" NOLOGIN BYPASSRLS'))
    try:
        assert f"the reader role {reader!r} is BYPASSRLS: row-level security does not apply" in (
            _pg_findings(parcels_engine, catalog, reader)
        )
        res = CliRunner().invoke(
            cli,
            [
                "--db",
                parcels_url,
                "--catalog",
                str(write_catalog(tmp_path)),
                "db",
                "secure",
                "--reader-role",
                reader,
            ],
        )
        assert res.exit_code == 0, res.output
        assert _pg_findings(parcels_engine, catalog, reader) == []
    finally:
        with parcels_engine.begin() as conn:
            conn.execute(sa.text(f'DROP OWNED BY "{reader}"'))
            conn.execute(sa.text(f'DROP ROLE "{reader}"'))


def test_db_secure_on_sqlite_is_a_usage_error(tmp_path: Path) -> None:
    url = f"sqlite+pysqlite:///{tmp_path / 'parcels.sqlite3'}"
    fresh_parcels(url).dispose()
    path = write_catalog(tmp_path)
    res = CliRunner().invoke(cli, ["--json", "--db", url, "--catalog", str(path), "db", "secure"])
    assert res.exit_code == 2
    assert json.loads(res.stderr)["error"]["subtype"] == "not_postgresql"
