"""A breakdown's group cites its first members in the id's own order, on SQLite and
PostgreSQL: with integer ids (the shop's) order 2 comes before order 10, which
their text would put after it; text ids keep byte order (tests/executor/test_breakdown_kind.py)."""

from __future__ import annotations

import sqlalchemy as sa
from deployments.shop import SHOP_TENANTS, Rows

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.kinds.breakdown import CITED_PER_GROUP
from qdsl.dsl.plan.parser import parse_text
from qdsl.executor.run import execute


def test_a_group_cites_its_first_members_in_the_ids_own_order(
    shop: tuple[sa.Engine, Rows], shop_catalog: Catalog
) -> None:
    engine, rows = shop
    for tenant in SHOP_TENANTS:
        plan = parse_text("breakdown order group by status")
        result = execute(plan, shop_catalog, engine, tenant)
        members: dict[str, list[int]] = {}
        for r in rows["orders"]:
            if r["tenant_id"] == tenant:
                members.setdefault(r["status"], []).append(int(r["id"]))
        # the data can tell numeric order from text order
        assert any(
            sorted(ids)[:CITED_PER_GROUP] != sorted(ids, key=str)[:CITED_PER_GROUP]
            for ids in members.values()
        )
        for g in result.data["groups"]:
            (status,) = g["keys"]
            want = [str(i) for i in sorted(members[status])[:CITED_PER_GROUP]]
            assert sorted(g["ids"], key=int) == want, status
