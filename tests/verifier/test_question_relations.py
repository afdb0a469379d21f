"""question_covered across relations, on the shop: the question's reading carries
its relation conditions (`orders.status`, `payments.refunded`), and a plan that
drops one, applies it to the wrong entity (the order's own field instead of the
related one) or names a path the catalog does not declare is never answered."""

from __future__ import annotations

import pytest

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.linking import LinkedValue
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.question import Reading, read_question
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.result import ExecutionResult
from qdsl.planner import plan_from_reading
from qdsl.verifier import Answer, Subject, VerifyContext
from qdsl.verifier.checks.question import question_covered

CASES = {
    "Which customers have a cancelled order?": (
        'list customer where orders.status = "cancelled"',
        [
            "list customer",  # dropped
            'list customer where orders.status = "delivered"',  # another value
        ],
    ),
    "Which orders have a refunded payment?": (
        "list order where payments.refunded = true",
        [
            "list order",
            "list order where payments.refunded = false",
            'list order where status = "cancelled"',  # on the order itself
        ],
    ),
}


def issues(reading: Reading, plan: Plan, catalog: Catalog) -> list[str]:
    result = ExecutionResult(
        execution_id="e",
        tenant_id="t1",
        query_type=plan.query_type,
        entity_type=plan.entity_type,
        template="t",
        plan_hash="h",
        rows=(),
        count=0,
    )
    answer = Answer(contract=plan.answer_contract or "clarify_or_fail", text="")  # type: ignore[arg-type]
    ctx = VerifyContext(tenant_id="t1", catalog=catalog, question=reading)
    return [
        i.message
        for i in question_covered(Subject(plan=plan, result=result, answer=answer, context=ctx))
    ]


def bound(text: str, catalog: Catalog) -> Plan:
    return normalize(load_plan(text), catalog, PlanContext(tenant_id="t1")).plan


@pytest.mark.parametrize("question", sorted(CASES))
def test_the_reading_carries_the_relation_and_the_right_plan_passes(
    question: str, shop_catalog: Catalog
) -> None:
    reading = read_question(question, shop_catalog)
    assert reading.understood, reading.problems
    right, _ = CASES[question]
    assert issues(reading, bound(right, shop_catalog), shop_catalog) == []
    # the rule planner states it as the hand-written plan does
    planned = normalize(
        plan_from_reading(reading, shop_catalog), shop_catalog, PlanContext(tenant_id="t1")
    ).plan
    assert planned.filters == bound(right, shop_catalog).filters


@pytest.mark.parametrize("question", sorted(CASES))
def test_every_mutant_is_caught(question: str, shop_catalog: Catalog) -> None:
    reading = read_question(question, shop_catalog)
    _, mutants = CASES[question]
    for text in mutants:
        assert issues(reading, bound(text, shop_catalog), shop_catalog), text


def test_the_condition_on_the_wrong_entity_is_caught(shop_catalog: Catalog) -> None:
    reading = read_question("Which customers have a cancelled order?", shop_catalog)
    # the cancelled orders themselves, not their customers
    assert issues(
        reading, bound('list order where status = "cancelled"', shop_catalog), shop_catalog
    )
    reading = read_question("Which orders have a refunded payment?", shop_catalog)
    # the payments, not the orders
    assert issues(reading, bound("list payment where refunded = true", shop_catalog), shop_catalog)


def test_a_path_not_declared_is_refused_before_anything_runs(shop_catalog: Catalog) -> None:
    for text in (
        'list customer where payments.method = "card"',  # skips the order
        'list customer where orders.lines.product.name = "x"',  # three hops
        'list customer where customers.city = "Berlin"',  # a table
    ):
        with pytest.raises(PlanError):
            bound(text, shop_catalog)


def test_chinese_reads_the_last_noun_as_the_entity_asked(shop_catalog: Catalog) -> None:
    reading = read_question("有已取消订单的客户有哪些", shop_catalog)
    assert reading.entity == "customer"
    assert [c.field for c in reading.conditions] == ["orders.status"]
    reading = read_question("金卡会员客户的订单有多少个付款记录", shop_catalog)
    assert reading.entity == "payment"
    assert [(c.field, c.value) for c in reading.conditions] == [("order.customer.tier", "gold")]
    reading = read_question("有退款的订单有哪些", shop_catalog)
    assert (reading.entity, reading.conditions[0].field) == ("order", "payments.refunded")


def test_a_chinese_name_in_an_english_question_leaves_the_head_noun_asked(
    shop_catalog: Catalog,
) -> None:
    # the Chinese reading of the last noun as the head ("北京客户的订单") is for Chinese
    # nouns, not for an English question quoting a Chinese name
    values = {normalize_text("北京"): (LinkedValue("customer", "city", "北京"),)}
    for question, entity, want in (
        (
            "List the cancelled orders of customers in 北京",
            "order",
            [("status", "cancelled"), ("customer.city", "北京")],
        ),
        (
            "北京客户的已取消订单有哪些",
            "order",
            [("customer.city", "北京"), ("status", "cancelled")],
        ),
        ("Which customers in 北京 have a cancelled order?", "customer", None),
    ):
        reading = read_question(question, shop_catalog, values=values)
        assert reading.understood, (question, reading.problems)
        assert reading.entity == entity, question
        if want is not None:
            assert [(c.field, c.value) for c in reading.conditions] == want, question


def test_a_negation_over_one_to_many_is_not_read_as_a_relation_condition(
    shop_catalog: Catalog,
) -> None:
    # "no refunded payment" is not "some payment not refunded": not understood
    for question in ("没有退款的订单有哪些", "Which customers have no cancelled order?"):
        assert not read_question(question, shop_catalog).understood, question


def test_a_related_entity_named_without_a_condition_is_not_understood(
    shop_catalog: Catalog,
) -> None:
    reading = read_question("Which orders are from customers in Atlantis?", shop_catalog)
    assert not reading.understood


def test_the_answer_names_the_related_field_in_words(shop_catalog: Catalog) -> None:
    from qdsl.phrases import condition

    plan = bound('list customer where orders.status = "cancelled"', shop_catalog)
    assert condition(shop_catalog, "customer", plan.filters[0], "en") == "orders status = cancelled"
    zh = condition(shop_catalog, "customer", plan.filters[0], "zh")
    assert zh.startswith("订单的状态") and "已取消" in zh
