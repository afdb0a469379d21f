"""The implicit id / label filters: one definition, used by the normalizer and the executor."""

from __future__ import annotations

import pytest

from qdsl.dsl.catalog import FieldType, demo_catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.normalize.names import field_spec
from qdsl.executor.compile import prepare

CATALOG = demo_catalog()


def test_declared_field_wins_over_the_implicit_label() -> None:
    project = CATALOG.entity("project")
    assert project.filter_spec("title") is project.fields["title"]


def test_implicit_id_and_label_specs() -> None:
    run = CATALOG.entity("run")  # label `question` is not declared as a field
    id_spec, label_spec = run.filter_spec("id"), run.filter_spec("question")
    assert id_spec is not None and id_spec.type is FieldType.ID
    assert set(id_spec.operators) == {
        Operator.EQUALS,
        Operator.NOT_EQUALS,
        Operator.IN,
        Operator.NOT_IN,
    }
    assert label_spec is not None and label_spec.type is FieldType.TEXT
    assert set(label_spec.operators) == {Operator.EQUALS, Operator.CONTAINS, Operator.IN}
    assert run.filter_spec("nope") is None


@pytest.mark.parametrize("entity", sorted(CATALOG.entities))
@pytest.mark.parametrize("operator", list(Operator))
def test_normalizer_and_executor_agree_on_the_id(entity: str, operator: Operator) -> None:
    ent = CATALOG.entity(entity)
    spec = field_spec(ent, ent.id)
    assert spec is not None
    value: object = ("1",) if operator in (Operator.IN, Operator.NOT_IN) else "1"
    value = ("1", "2") if operator is Operator.BETWEEN else value
    value = True if operator is Operator.IS_NULL else value
    flt = Filter(field=ent.id, operator=operator, value=value)  # type: ignore[arg-type]
    plan = Plan(query_type=QueryType.LIST, entity_type=entity, filters=(flt,))
    if operator in spec.operators:
        bound = normalize(plan, CATALOG, PlanContext(tenant_id="t1")).bound
        assert bound is not None and bound.filters[0].column == ent.id
        assert prepare(plan, CATALOG, "sqlite", "t1").bound == bound.filters
    else:
        for bind in (
            lambda: normalize(plan, CATALOG, PlanContext(tenant_id="t1")),
            lambda: prepare(plan, CATALOG, "sqlite", "t1"),
        ):
            with pytest.raises(PlanError) as caught:
                bind()
            assert caught.value.subtype == "operator_not_allowed"
