"""Property: whatever mix of security faults a PostgreSQL deployment has,
`catalog check` flags it, and one `db secure` leaves nothing to flag or do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdsl.facts.check import check_catalog
from qdsl.facts.db import READER_ROLE, make_engine
from qdsl.facts.secure import secure
from tests.facts.parcels import fresh_parcels, parcels_catalog

pytestmark = pytest.mark.pg

FAULTS = (
    "ALTER TABLE parcels DISABLE ROW LEVEL SECURITY",
    "DROP POLICY qdsl_qdsl_reader_tenant ON parcels",
    "REVOKE SELECT (carrier) ON parcels FROM qdsl_reader",
    "GRANT SELECT ON parcels TO qdsl_reader",
    "ALTER TABLE parcels OWNER TO qdsl_reader",
    "REVOKE SELECT ON semantic_facts FROM qdsl_reader",
    "ALTER TABLE semantic_facts NO FORCE ROW LEVEL SECURITY",
)


@pytest.fixture(scope="module")
def secured(
    pg_database_factory: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[sa.Engine, Path]]:
    url = pg_database_factory()
    fresh_parcels(url).dispose()
    directory = tmp_path_factory.mktemp("parcels")
    engine = make_engine(url)
    secure(engine, parcels_catalog(directory), reader=READER_ROLE, apply=True)
    yield engine, directory
    engine.dispose()


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(faults=st.lists(st.sampled_from(FAULTS), unique=True))
def test_any_faults_are_flagged_and_one_secure_fixes_them(
    secured: tuple[sa.Engine, Path], faults: list[str]
) -> None:
    engine, directory = secured
    catalog = parcels_catalog(directory)
    with engine.begin() as conn:
        for statement in faults:
            conn.exec_driver_sql(statement)

    def flagged() -> list[str]:
        return [
            f.message for f in check_catalog(engine, catalog).findings if f.rule == "pg_security"
        ]

    assert bool(flagged()) == bool(faults)
    secure(engine, catalog, reader=READER_ROLE, apply=True)
    assert flagged() == []
    assert secure(engine, catalog, reader=READER_ROLE, apply=False) == []
