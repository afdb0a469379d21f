"""Value linking end to end: another tenant's values never change a plan for the asking tenant.

Questions naming carriers, cities and customers of the shipping deployment are
answered for tenant `acme` through the whole pipeline with the database's
value index; tenant `zeta` then gains and loses values (some of them also
acme's, some its own only) and its index is rebuilt. Every answer for acme
must stay the same: status, text and plan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shipping import CATALOG_TOML, SHIPMENTS, catalog, insert, shipment, wipe
from sqlalchemy import Engine

from qdsl import AnswerOptions, plan_and_answer
from qdsl.cli.main import cli
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.value_index import forget, value_source_for

CAT = catalog()
ACME = [
    shipment("acme", "SH-1", carrier="顺丰", city="深圳", customer="Li Wei"),
    shipment("acme", "SH-2", carrier="DHL", city="Hamburg", customer="Li Wei"),
    shipment("acme", "SH-3", carrier="顺丰", city="Hamburg", customer="Chen Jing"),
]
ACME_NAMES = ["顺丰", "DHL", "深圳", "Hamburg", "Li Wei", "Chen Jing"]
ZETA_ONLY = ["UPS", "EMS", "Lyon", "Priya Nair"]
NAMES = ACME_NAMES + ZETA_ONLY
TEMPLATES = [
    "{}的运单有多少",
    "有没有{}的运单",
    "How many shipments for {}?",
    "列出{}的运单",
]
ZETA_ROW = st.fixed_dictionaries(
    {
        "carrier": st.none() | st.sampled_from(NAMES),
        "city": st.none() | st.sampled_from(NAMES),
        "customer": st.sampled_from(NAMES),
    }
)


def _zeta(rows: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    return [shipment("zeta", f"Z-{start + i}", **r) for i, r in enumerate(rows)]


def _answers(engine: Engine, questions: list[str]) -> list[tuple[Any, ...]]:
    forget(engine)
    values = value_source_for(engine, CAT)
    out = []
    for q in questions:
        options = AnswerOptions(catalog=CAT, values=values)
        r = plan_and_answer(q, "acme", engine=engine, options=options)
        plan = r.plan.to_json_dict() if r.plan is not None else None
        out.append((r.status, r.text, plan))
    return out


def _filter_values(answer: tuple[Any, ...]) -> set[str]:
    plan = answer[2] or {}
    found: set[str] = set()
    for f in plan.get("filters", []):
        value = f.get("value")
        found.update(value if isinstance(value, list) else [value])
    return {str(v) for v in found}


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(ZETA_ROW, max_size=5),
    after=st.lists(ZETA_ROW, max_size=5),
    questions=st.lists(
        st.builds(str.format, st.sampled_from(TEMPLATES), st.sampled_from(NAMES)),
        min_size=1,
        max_size=3,
    ),
    refresh=st.booleans(),
)
def test_another_tenants_values_never_change_a_plan(
    ship_db: tuple[str, Engine],
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    questions: list[str],
    refresh: bool,
) -> None:
    _, engine = ship_db
    wipe(engine)
    insert(engine, [*ACME, *_zeta(before, 0)])
    if refresh:
        refresh_index(engine, CAT)
    first = _answers(engine, questions)
    with engine.begin() as conn:
        conn.execute(SHIPMENTS.delete().where(SHIPMENTS.c.org == "zeta"))
    insert(engine, _zeta(after, 100))
    if refresh:
        refresh_index(engine, CAT)
    else:
        forget(engine)
        value_source_for(engine, CAT).values_for("zeta")  # zeta's own first use
    assert _answers(engine, questions) == first
    for answer in first:
        assert not _filter_values(answer) & set(ZETA_ONLY), answer


def test_a_name_of_the_asking_tenant_links_and_another_tenants_does_not(
    ship: Engine,
) -> None:
    insert(ship, [*ACME, shipment("zeta", "Z-1", carrier="UPS", customer="Priya Nair")])
    (mine, theirs) = _answers(ship, ["顺丰的运单有多少", "UPS的运单有多少"])
    assert mine[0] == "answered" and mine[2]["filters"] == [
        {"field": "carrier", "operator": "equals", "value": "顺丰", "value_source": "user_text"}
    ]
    assert theirs[0] == "clarify" and "UPS" in theirs[1]


def test_by_default_names_link_through_the_answering_database(
    ship_db: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = ship_db
    wipe(engine)
    insert(engine, [*ACME, shipment("zeta", "Z-1", carrier="UPS")])
    forget(engine)
    res = plan_and_answer(
        "顺丰的运单有多少", "acme", engine=engine, options=AnswerOptions(catalog=CAT)
    )
    assert res.status == "answered" and res.data == {"count": 2}
    path = tmp_path / "shipping.toml"
    path.write_text(CATALOG_TOML, encoding="utf-8")
    args = ["--json", "--db", url, "--catalog", str(path), "ask", "--tenant"]
    out = CliRunner().invoke(cli, [*args, "acme", "How many shipments for Li Wei?"])
    assert json.loads(out.stdout)["data"]["answer"] == {"count": 2}
    theirs = CliRunner().invoke(cli, [*args, "acme", "UPS的运单有多少"])
    assert json.loads(theirs.stdout)["data"]["status"] == "clarify"
