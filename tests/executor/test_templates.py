"""The registry is exhaustive: every pair the catalog allows has a template,
every other pair fails closed with not_covered/template_not_covered (exit 4)."""

from __future__ import annotations

import pytest
from exec_support import CATALOG, sample_plan

from qdsl.dsl.catalog import catalog_from_mapping
from qdsl.dsl.errors import NotCoveredError
from qdsl.dsl.ir import QueryType
from qdsl.executor.compile import compile_plan
from qdsl.executor.templates import registry, template_for

ALL_PAIRS = [(e, qt) for e in CATALOG.entities for qt in QueryType]
ALLOWED = {(e, qt) for e, spec in CATALOG.entities.items() for qt in spec.query_types}


def test_every_allowed_pair_has_a_template() -> None:
    covered = registry(CATALOG)
    assert set(covered) == ALLOWED
    for (entity, qt), template in covered.items():
        assert template.name == f"{entity}.{qt.value}"


def test_all_seven_query_types_are_covered_somewhere() -> None:
    covered_types = {qt for _e, qt in registry(CATALOG)}
    assert covered_types == set(QueryType) - {QueryType.UNKNOWN}


@pytest.mark.parametrize(("entity", "query_type"), sorted(ALLOWED))
def test_allowed_pair_compiles_on_both_dialects(entity: str, query_type: QueryType) -> None:
    plan = sample_plan(entity, query_type)
    for dialect in ("sqlite", "postgresql"):
        compiled = compile_plan(plan, CATALOG, dialect, tenant_id="t1")
        assert compiled.template == f"{entity}.{query_type.value}"
        assert compiled.statements[0].role == "main"


@pytest.mark.parametrize(("entity", "query_type"), sorted(p for p in ALL_PAIRS if p not in ALLOWED))
def test_other_pairs_are_not_covered(entity: str, query_type: QueryType) -> None:
    with pytest.raises(NotCoveredError) as info:
        template_for(CATALOG, entity, query_type)
    assert info.value.code == "not_covered/template_not_covered"
    assert info.value.exit_code == 4
    assert info.value.details["covered"] == sorted(
        qt.value for (e, qt) in registry(CATALOG) if e == entity
    )


def test_unknown_entity_is_not_covered() -> None:
    with pytest.raises(NotCoveredError) as info:
        template_for(CATALOG, "invoice", QueryType.LIST)
    assert info.value.subtype == "template_not_covered"


def test_enabled_pair_without_what_the_template_reads_is_not_covered() -> None:
    # explain needs text to cite, diagnose needs facts: enabling them is not enough.
    catalog = catalog_from_mapping(
        {
            "entities": {
                "thing": {
                    "table": "things",
                    "label": "name",
                    "query_types": ["explain", "diagnose", "list"],
                }
            }
        }
    )
    assert set(registry(catalog)) == {("thing", QueryType.LIST)}
    for qt in (QueryType.EXPLAIN, QueryType.DIAGNOSE):
        with pytest.raises(NotCoveredError, match="cannot serve"):
            template_for(catalog, "thing", qt)
