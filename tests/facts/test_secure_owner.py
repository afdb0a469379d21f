"""`db secure` changes what qdsl's reader sees, and nothing else (SPEC 7).

Before: it forced row-level security on the deployer's own tables, so their
application, connecting as the (non-superuser) table owner, saw 0 rows unless
it set `app.tenant_id`. Now the owner and the deployer's other roles see, and
write, what they did before; the reader sees no row without a tenant and
exactly that tenant's rows with one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from qdsl.cli.main import cli
from qdsl.facts.db import READER_ROLE, upgrade

pytestmark = pytest.mark.pg

_CATALOG = """
[entities.order]
table = "orders"
id = "id"
tenant = "shop"
label = "note"
default_projection = ["id", "note"]
query_types = ["existence", "count", "list"]
"""

_ROWS = [("t1", 1, "first"), ("t1", 2, "second"), ("t2", 1, "other shop's")]


@dataclass(frozen=True)
class Deployment:
    admin_url: str  # the superuser qdsl's tests run as: it runs `db secure`
    owner_url: str  # the deployer's application: owns `orders`, not a superuser
    app_url: str  # another role of the deployer's, granted SELECT and INSERT
    catalog: Path


def _as(url: str, role: str) -> str:
    return make_url(url).set(username=role).render_as_string(hide_password=False)


@pytest.fixture
def deployment(
    pg_database_factory: Callable[[], str], pg_admin_url: str, tmp_path: Path
) -> Iterator[Deployment]:
    url = pg_database_factory()
    upgrade(url)
    suffix = uuid.uuid4().hex[:10]
    owner, app = f"shop_owner_{suffix}", f"shop_app_{suffix}"
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    engine = sa.create_engine(url)
    # Role names are hex digits generated above, not input.
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE ROLE "{owner}" LOGIN NOSUPERUSER NOBYPASSRLS'))
        conn.execute(sa.text(f'CREATE ROLE "{app}" LOGIN NOSUPERUSER NOBYPASSRLS'))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'GRANT USAGE ON SCHEMA public TO "{owner}", "{app}"'))
            conn.execute(sa.text(f'GRANT CREATE ON SCHEMA public TO "{owner}"'))
            conn.execute(
                sa.text(
                    "CREATE TABLE orders (shop VARCHAR(20) NOT NULL, id INTEGER NOT NULL, "
                    "note TEXT NOT NULL)"
                )
            )
            conn.execute(
                sa.text("INSERT INTO orders VALUES (:s, :i, :n)"),
                [{"s": s, "i": i, "n": n} for s, i, n in _ROWS],
            )
            conn.execute(sa.text(f'ALTER TABLE orders OWNER TO "{owner}"'))
            conn.execute(sa.text(f'GRANT SELECT, INSERT ON orders TO "{app}"'))
        catalog = tmp_path / "shop.toml"
        catalog.write_text(_CATALOG, encoding="utf-8")
        yield Deployment(url, _as(url, owner), _as(url, app), catalog)
    finally:
        engine.dispose()
        with admin.connect() as conn:
            database = make_url(url).database
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{owner}"'))
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{app}"'))
        admin.dispose()


def _count(url: str, tenant: str | None = None, role: str | None = None) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            if role is not None:
                conn.execute(sa.text(f'SET LOCAL ROLE "{role}"'))
            if tenant is not None:
                conn.execute(sa.select(sa.func.set_config("app.tenant_id", tenant, True)))
            return int(conn.execute(sa.text("SELECT count(*) FROM orders")).scalar_one())
    finally:
        engine.dispose()


def _reader_rows(url: str, tenant: str | None) -> set[tuple[str, int]]:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'SET LOCAL ROLE "{READER_ROLE}"'))
            if tenant is not None:
                conn.execute(sa.select(sa.func.set_config("app.tenant_id", tenant, True)))
            rows = conn.execute(sa.text("SELECT shop, id FROM orders")).all()
    finally:
        engine.dispose()
    return {(str(r[0]), int(r[1])) for r in rows}


def _secure(d: Deployment, *extra: str) -> dict[str, object]:
    res = CliRunner().invoke(
        cli, ["--json", "--db", d.admin_url, "--catalog", str(d.catalog), "db", "secure", *extra]
    )
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)["data"]
    return data


def test_the_owner_and_other_roles_see_what_they_saw_before(deployment: Deployment) -> None:
    assert _count(deployment.owner_url) == _count(deployment.app_url) == len(_ROWS)
    _secure(deployment)
    # no tenant set, as the deployer's application never sets one
    assert _count(deployment.owner_url) == len(_ROWS)
    assert _count(deployment.app_url) == len(_ROWS)
    engine = sa.create_engine(deployment.app_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO orders VALUES ('t3', 9, 'still writable')"))
    finally:
        engine.dispose()
    assert _count(deployment.owner_url) == len(_ROWS) + 1


def test_the_reader_sees_one_tenant_and_none_without_one(deployment: Deployment) -> None:
    _secure(deployment)
    assert _reader_rows(deployment.admin_url, None) == set()
    assert _reader_rows(deployment.admin_url, "t1") == {("t1", 1), ("t1", 2)}
    assert _reader_rows(deployment.admin_url, "t2") == {("t2", 1)}


def test_the_plan_lists_every_change_and_forces_nothing(deployment: Deployment) -> None:
    planned = _secure(deployment, "--print")
    assert planned["applied"] is False
    sqls = [str(s["sql"]) for s in planned["statements"]]  # type: ignore[attr-defined]
    on_orders = [s for s in sqls if '"orders"' in s]
    assert on_orders == [
        f'GRANT SELECT ON "public"."orders" TO "{READER_ROLE}"',
        'ALTER TABLE "public"."orders" ENABLE ROW LEVEL SECURITY',
        'CREATE POLICY "qdsl_others_unchanged" ON "public"."orders" AS PERMISSIVE FOR ALL '
        "TO PUBLIC USING (true) WITH CHECK (true)",
        f'CREATE POLICY "qdsl_{READER_ROLE}_tenant" ON "public"."orders" AS RESTRICTIVE FOR ALL '
        f'TO "{READER_ROLE}" USING ("shop" = NULLIF(current_setting(\'app.tenant_id\', true), '
        "'')) WITH CHECK (\"shop\" = NULLIF(current_setting('app.tenant_id', true), ''))",
    ]
    assert not any("FORCE" in s for s in sqls)
    # --print changed nothing; applying it leaves nothing to do
    assert _count(deployment.owner_url) == len(_ROWS)
    _secure(deployment)
    assert _secure(deployment, "--print")["statements"] == []


def test_the_deployers_own_policies_stand(deployment: Deployment) -> None:
    app = make_url(deployment.app_url).username
    engine = sa.create_engine(deployment.admin_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE orders ENABLE ROW LEVEL SECURITY"))
            conn.execute(
                sa.text(f"CREATE POLICY t1_only ON orders TO \"{app}\" USING (shop = 't1')")
            )
    finally:
        engine.dispose()
    assert _count(deployment.app_url) == 2
    planned = _secure(deployment)
    sqls = [str(s["sql"]) for s in planned["statements"]]  # type: ignore[attr-defined]
    # RLS was the deployer's: no open policy is added, theirs keep their meaning
    assert not any("qdsl_others_unchanged" in s for s in sqls)
    assert any(f'"qdsl_{READER_ROLE}_rows"' in s and "FOR SELECT" in s for s in sqls)
    assert _count(deployment.app_url) == 2
    assert _count(deployment.owner_url) == len(_ROWS)
    assert _reader_rows(deployment.admin_url, None) == set()
    assert _reader_rows(deployment.admin_url, "t2") == {("t2", 1)}


_VIEWS = """
[entities.order_view]
table = "orders_v"
id = "id"
tenant = "shop"
label = "note"
default_projection = ["id", "note"]
query_types = ["existence", "count", "list"]

[entities.order_inv]
table = "orders_inv"
id = "id"
tenant = "shop"
label = "note"
default_projection = ["id", "note"]
query_types = ["existence", "count", "list"]
"""


def test_views_over_a_secured_table(deployment: Deployment) -> None:
    """qdsl grants a view and never alters it. A plain view reads `orders` with its
    owner's rights, and the owner bypasses unforced RLS: there the executor's tenant
    predicate alone keeps tenants apart. A `security_invoker` view reads as the
    reader, so the reader's policies on `orders` apply to it too."""
    owner = make_url(deployment.owner_url).username
    engine = sa.create_engine(deployment.owner_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE VIEW orders_v AS SELECT * FROM orders"))
            conn.execute(
                sa.text(
                    "CREATE VIEW orders_inv WITH (security_invoker = true) AS SELECT * FROM orders"
                )
            )
    finally:
        engine.dispose()
    deployment.catalog.write_text(_CATALOG + _VIEWS, encoding="utf-8")
    data = _secure(deployment)
    isolation = {str(i["table"]): str(i["isolation"]) for i in data["isolation"]}  # type: ignore[attr-defined]
    assert "with its owner's rights" in isolation["orders_v"]
    assert "security_invoker" in isolation["orders_inv"]
    assert not any(
        "orders_v" in str(s["sql"]) and "GRANT" not in str(s["sql"])
        for s in data["statements"]  # type: ignore[attr-defined]
    )
    admin = sa.create_engine(deployment.admin_url)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'SET LOCAL ROLE "{READER_ROLE}"'))
            conn.execute(sa.select(sa.func.set_config("app.tenant_id", "t2", True)))
            # read raw, as no qdsl statement ever reads: the plain view shows every tenant
            assert conn.execute(sa.text("SELECT count(*) FROM orders_v")).scalar_one() == 3
            assert conn.execute(sa.text("SELECT count(*) FROM orders_inv")).scalar_one() == 1
        with admin.begin() as conn:
            assert (
                conn.execute(
                    sa.text("SELECT viewowner FROM pg_views WHERE viewname = 'orders_v'")
                ).scalar_one()
                == owner
            )
    finally:
        admin.dispose()
    import qdsl
    from qdsl.dsl.catalog import load_catalog

    catalog = load_catalog(deployment.catalog)
    engine = sa.create_engine(deployment.admin_url)
    try:
        for table in ("order_view", "order_inv"):
            got = qdsl.plan_and_answer(
                f"list {table}", "t2", engine=engine, options=qdsl.AnswerOptions(catalog=catalog)
            )
            assert got.status == "answered", (got.status, got.error)
            assert [i["label"] for i in got.data["items"]] == ["other shop's"]
    finally:
        engine.dispose()
