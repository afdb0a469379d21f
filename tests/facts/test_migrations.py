"""qdsl's Alembic history creates only qdsl's own tables, on SQLite and PostgreSQL,
idempotently, in its own version table beside a deployer's own history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.migration import MigrationContext
from sqlalchemy import Engine, MetaData, inspect, text

from qdsl.facts.db import HEAD_REVISION, READER_ROLE, VERSION_TABLE, make_engine, upgrade
from qdsl.facts.tables import TENANT_TABLES, metadata, postgresql_metadata


def _assert_schema_matches_metadata(engine: Engine, metadata: MetaData = metadata) -> None:
    from alembic.autogenerate import compare_metadata

    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "version_table": VERSION_TABLE,
                # a deployer's own tables are theirs, not drift
                "include_name": lambda name, type_, _parent: (
                    type_ != "table" or name in metadata.tables
                ),
            },
        )
        diff = compare_metadata(ctx, metadata)
    assert diff == [], f"migration and facts.tables drifted apart: {diff}"


def _assert_core_schema(engine: Engine) -> None:
    insp = inspect(engine)
    names = set(insp.get_table_names())
    assert {t.name for t in TENANT_TABLES} | {VERSION_TABLE} <= names
    fact_indexes = {ix["name"]: ix["column_names"] for ix in insp.get_indexes("semantic_facts")}
    assert fact_indexes["ix_semantic_facts_lookup"] == [
        "tenant_id",
        "entity_type",
        "predicate",
        "value_norm",
    ]
    assert fact_indexes["ix_semantic_facts_entity"] == ["tenant_id", "entity_type", "entity_id"]
    # The gram lookup index is the primary key's prefix.
    pk = insp.get_pk_constraint("text_grams")["constrained_columns"]
    assert pk[:3] == ["tenant_id", "entity_type", "gram"]
    # qdsl's own indexes are keyed by the tenant first.
    for name in ("value_index", "index_state"):
        assert insp.get_pk_constraint(name)["constrained_columns"][0] == "tenant_id"
    _assert_schema_matches_metadata(engine)


def test_sqlite_upgrade_creates_only_qdsl_tables_and_is_idempotent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.sqlite3'}"
    assert upgrade(url) == HEAD_REVISION
    assert upgrade(url) == HEAD_REVISION
    engine = make_engine(url)
    try:
        _assert_core_schema(engine)
        assert set(inspect(engine).get_table_names()) == {
            *(t.name for t in TENANT_TABLES),
            VERSION_TABLE,
        }
    finally:
        engine.dispose()


def _deployers_schema(engine: Engine) -> None:
    """A deployer's own tables and Alembic history, with a `users` table qdsl's demo has too."""
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('d3ad6e3f')"))
        conn.execute(text("CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT NOT NULL)"))
        conn.execute(text("INSERT INTO users VALUES (1, 'ada')"))


def _assert_deployers_schema_untouched(engine: Engine) -> None:
    insp = inspect(engine)
    assert [c["name"] for c in insp.get_columns("users")] == ["id", "login"]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).all() == [
            ("d3ad6e3f",)
        ]
        assert conn.execute(text("SELECT id, login FROM users")).all() == [(1, "ada")]
        assert conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all() == [
            (HEAD_REVISION,)
        ]
    assert {"projects", "tasks", "docs"}.isdisjoint(insp.get_table_names())


def test_upgrade_lives_beside_a_deployers_own_history(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'deployer.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    engine = make_engine(url)
    try:
        _deployers_schema(engine)
        assert upgrade(url) == HEAD_REVISION
        assert upgrade(url) == HEAD_REVISION
        _assert_deployers_schema_untouched(engine)
        _assert_core_schema(engine)
    finally:
        engine.dispose()


def test_sqlite_downgrade_then_upgrade_again(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from qdsl.facts.db import migrations_dir

    url = f"sqlite:///{tmp_path / 'd.sqlite3'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        cfg = Config()
        cfg.set_main_option("script_location", str(migrations_dir()))
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        assert set(inspect(engine).get_table_names()) == {VERSION_TABLE}
    finally:
        engine.dispose()
    assert upgrade(url) == HEAD_REVISION


@pytest.fixture
def fresh_pg_engine(pg_database_factory: Callable[[], str]) -> tuple[str, Engine]:
    url = pg_database_factory()
    return url, make_engine(url)


def test_postgresql_upgrade_creates_everything_and_is_idempotent(
    fresh_pg_engine: tuple[str, Engine],
) -> None:
    url, engine = fresh_pg_engine
    try:
        # Twice, on a cluster where qdsl_reader already exists (the session's
        # demo database created it): role creation must tolerate that.
        assert upgrade(url) == HEAD_REVISION
        assert upgrade(url) == HEAD_REVISION
        _assert_core_schema(engine)
        with engine.connect() as conn:
            rls = {
                row.relname: (row.relrowsecurity, row.relforcerowsecurity)
                for row in conn.execute(
                    text(
                        "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
                        "WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace"
                    )
                )
            }
            for table in TENANT_TABLES:
                assert rls[table.name] == (True, True), table.name
            policies = {
                (row.tablename, row.qual)
                for row in conn.execute(text("SELECT tablename, qual FROM pg_policies"))
            }
            for table in TENANT_TABLES:
                quals = [q for t, q in policies if t == table.name]
                assert len(quals) == 1
                assert "NULLIF(current_setting('app.tenant_id'::text, true), ''::text)" in quals[0]
            role = conn.execute(
                text("SELECT rolcanlogin FROM pg_roles WHERE rolname = :r"), {"r": READER_ROLE}
            ).one()
            assert role.rolcanlogin is False
            privs = set(
                conn.execute(
                    text(
                        "SELECT DISTINCT privilege_type FROM information_schema.role_table_grants "
                        "WHERE grantee = :r AND table_catalog = current_database()"
                    ),
                    {"r": READER_ROLE},
                ).scalars()
            )
            assert privs == {"SELECT"}
    finally:
        engine.dispose()


def test_head_revision_constant_matches_the_scripts() -> None:
    from alembic.script import ScriptDirectory

    from qdsl.facts.db import HEAD_REVISION, migrations_dir

    assert ScriptDirectory(str(migrations_dir())).get_heads() == [HEAD_REVISION]


def _older_qdsl_schema(engine: Engine, *, empty_version_table: bool) -> None:
    """What a qdsl older than its own version table left: its tables, recorded in
    Alembic's default `alembic_version` (and, after a failed upgrade on SQLite,
    an empty `qdsl_alembic_version`)."""
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('0001')"))
        if empty_version_table:
            conn.execute(text(f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32))"))


@pytest.mark.parametrize("empty_version_table", [False, True])
def test_a_database_of_an_older_qdsl_is_named_as_such(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest, empty_version_table: bool
) -> None:
    from qdsl.facts.dberrors import SchemaPredatesVersion
    from qdsl.facts.demo.setup import ensure_demo

    if dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    engine = make_engine(url)
    try:
        _older_qdsl_schema(engine, empty_version_table=empty_version_table)
        before = sorted(inspect(engine).get_table_names())
        with pytest.raises(SchemaPredatesVersion) as info:
            upgrade(url)
        assert info.value.code == "database/schema_predates_version"
        assert "qdsl db upgrade" in (info.value.hint or "")
        with pytest.raises(SchemaPredatesVersion) as info:
            ensure_demo(url)
        assert "qdsl demo init" in (info.value.hint or "")
        if dialect == "sqlite":
            assert "demo.sqlite3" in (info.value.hint or "")
            assert str(tmp_path) not in str(info.value.to_dict())  # a file's name, no path
        # Refused before any DDL: nothing was created or changed.
        assert sorted(inspect(engine).get_table_names()) == before
    finally:
        engine.dispose()


def test_the_cli_on_an_older_default_demo_says_what_to_run() -> None:
    import json

    from click.testing import CliRunner

    from qdsl.cli.main import cli
    from qdsl.facts.db import default_database_url

    engine = make_engine(default_database_url())
    try:
        _older_qdsl_schema(engine, empty_version_table=False)
    finally:
        engine.dispose()
    result = CliRunner().invoke(cli, ["--json", "ask", "--tenant", "t1", "how many?"])
    assert result.exit_code == 8
    error = json.loads(result.stderr)["error"]
    assert error["subtype"] == "schema_predates_version"
    assert "qdsl demo init" in error["hint"] and "demo.sqlite3" in error["hint"]


def test_postgresql_gets_the_shared_ref_store_table_with_its_policies(
    fresh_pg_engine: tuple[str, Engine],
) -> None:
    """0003: `qdsl_refs` as facts.tables describes it, forced row-level
    security, SELECT alone for the reader role; SQLite gets no such table (above)."""
    url, engine = fresh_pg_engine
    try:
        upgrade(url)
        _assert_schema_matches_metadata(engine, postgresql_metadata)
        with engine.connect() as conn:
            forced = conn.execute(
                text(
                    "SELECT relrowsecurity, relforcerowsecurity FROM pg_class "
                    "WHERE relname = 'qdsl_refs' AND relnamespace = current_schema()::regnamespace"
                )
            ).one()
            assert tuple(forced) == (True, True)
            policies = {
                row.policyname: (row.permissive, row.roles)
                for row in conn.execute(
                    text(
                        "SELECT policyname, permissive, roles::text[] AS roles FROM pg_policies "
                        "WHERE tablename = 'qdsl_refs'"
                    )
                )
            }
            assert policies == {
                "tenant_isolation": ("PERMISSIVE", ["public"]),
                "ref_collector": ("PERMISSIVE", ["public"]),
                "reader_tenant": ("RESTRICTIVE", [READER_ROLE]),
            }
            privs = set(
                conn.execute(
                    text(
                        "SELECT privilege_type FROM information_schema.role_table_grants "
                        "WHERE grantee = :r AND table_name = 'qdsl_refs'"
                    ),
                    {"r": READER_ROLE},
                ).scalars()
            )
            assert privs == {"SELECT"}
    finally:
        engine.dispose()
