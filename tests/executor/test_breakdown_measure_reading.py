"""A measure per group is read on catalogs of other domains than the deployments'
(tests/executor/breakdown_support.py: a shop's orders, a staff list): the function,
the field it applies to and what it groups by, in zh and en."""

from __future__ import annotations

import pytest
from breakdown_support import SHOP, STAFF

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import QueryType
from qdsl.dsl.question import read_question


@pytest.mark.parametrize(
    ("catalog", "question", "function", "field", "group_by"),
    [
        (SHOP, "各渠道订单的件数合计", "sum", "items", (("channel", None),)),
        (SHOP, "What is the average items per city?", "avg", "items", (("city", None),)),
        (SHOP, "每周订单的平均件数", "avg", "items", (("placed_on", Grain.WEEK),)),
        (STAFF, "What is the total level per grade?", "sum", "level", (("grade", None),)),
        (STAFF, "按职级统计员工的级别总和", "sum", "level", (("grade", None),)),
        (STAFF, "monthly average level of employees", "avg", "level", (("hired_on", Grain.MONTH),)),
    ],
)
def test_a_measure_per_group_is_read_on_any_catalog(
    catalog: Catalog,
    question: str,
    function: str,
    field: str,
    group_by: tuple[tuple[str, Grain | None], ...],
) -> None:
    reading = read_question(question, catalog)
    assert reading.understood, reading.problems
    assert reading.query_type is QueryType.BREAKDOWN
    assert (reading.function, reading.projection, reading.group_by) == (
        function,
        (field,),
        group_by,
    )
