"""Breakdown questions end to end on SQLite and PostgreSQL, two catalogs: the rule
planner answers "per X" / 每个X / 按X统计 / monthly with the groups the oracle
counts, the answer states them (zh/en, enum aliases, "other" when cut), and
careless plans an LLM could write (a count, a list, another grouping, another
grain, no filter, altered data) are never answered."""

from __future__ import annotations

import copy
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from breakdown_support import SHOP, STAFF, load
from breakdown_support import bd_engine as bd_engine  # noqa: PLC0414 - a fixture
from fixed_planner import FixedPlanner
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.run import execute
from qdsl.render import render
from qdsl.verifier import Outcome, VerifyContext, verify

_T0 = datetime(2025, 1, 31, 20, 0, tzinfo=UTC)  # 2025-02-01 04:00 in Shanghai


def _row(i: int, tenant: str, kind: str | None, city: str | None, hours: int) -> dict[str, Any]:
    return {
        "tenant_id": tenant,
        "kind": kind,
        "city": city,
        "flag": i % 2 == 0,
        "n": i % 3,
        "day": date(2025, 1, 1) + timedelta(days=i * 9),
        "at_ts": _T0 + timedelta(hours=hours),
        "at_tz": _T0 + timedelta(hours=hours),
        "secret": "x",
    }


# t1: channel a x3, b x2, c x1, none x1; another tenant's rows never count
ROWS = [
    _row(0, "t1", "a", "berlin", 0),
    _row(1, "t1", "a", "berlin", -10),
    _row(2, "t1", "a", "上海", 40 * 24),
    _row(3, "t1", "b", "上海", 0),
    _row(4, "t1", "b", None, 1),
    _row(5, "t1", "c", "berlin", 2),
    _row(6, "t1", None, "berlin", 3),
    _row(7, "t2", "c", "berlin", 0),
    _row(8, "t2", "c", "berlin", 0),
    _row(9, "t2", "c", "berlin", 0),
]


@pytest.fixture
def data(bd_engine: Engine) -> Engine:
    load(bd_engine, ROWS)
    return bd_engine


def _ask(engine: Engine, catalog: Catalog, question: str, planner: Any = None) -> Any:
    options = AnswerOptions(catalog=catalog, planner=planner)
    return plan_and_answer(question, "t1", engine=engine, options=options)


def _groups(res: Any) -> dict[str, int]:
    return {" / ".join(str(k) for k in g["keys"]): g["value"] for g in res.data["groups"]}


@pytest.mark.parametrize(
    ("catalog", "question", "groups"),
    [
        (SHOP, "每个渠道有多少订单", {"a": 3, "b": 2, "c": 1, "None": 1}),
        (SHOP, "how many orders per channel?", {"a": 3, "b": 2, "c": 1, "None": 1}),
        (SHOP, "按渠道统计订单", {"a": 3, "b": 2, "c": 1, "None": 1}),
        (SHOP, "各城市的订单数", {"berlin": 4, "上海": 2, "None": 1}),
        (STAFF, "How many employees by office?", {"berlin": 4, "上海": 2, "None": 1}),
        (STAFF, "breakdown of employees by grade", {"a": 3, "b": 2, "c": 1, "None": 1}),
        # the catalog's zone: 2025-01-31 20:00 UTC is February in Shanghai, January in New York
        (
            SHOP,
            "how many orders per month",
            {"2025-02": 5, "2025-01": 1, "2025-03": 1},
        ),
        (STAFF, "每月有多少员工", {"2025-01": 4, "2025-02": 3}),  # hired_on: the one by month
        (SHOP, "每天有多少订单", None),  # two fields by day: asked which
    ],
)
def test_the_rule_planner_answers_a_breakdown(
    data: Engine, catalog: Catalog, question: str, groups: dict[str, int] | None
) -> None:
    res = _ask(data, catalog, question)
    if groups is None:
        assert res.status == "clarify", (res.status, res.text)
        return
    assert res.status == "answered", (question, res.status, res.text)
    assert res.answer_contract.value == "breakdown_table"
    assert _groups(res) == groups
    assert res.data["total"] == 7 and res.data["other"] == 0 and not res.data["truncated"]
    assert res.verdict.ok and "consistent_with_result" in res.verdict.checks_run
    first = res.data["groups"][0]
    assert f"[{next(iter(catalog.entities))}:{first['ids'][0]}]" in res.text


def test_the_answer_states_groups_total_and_other(data: Engine) -> None:
    zh = _ask(data, SHOP, "按渠道统计订单")
    assert zh.status == "answered", zh.text
    assert zh.text.startswith(
        "按渠道：甲（a） 3，乙（b） 2，丙（c） 1，无 1；共 7 个订单。依据："
    ), zh.text
    en = _ask(data, SHOP, "how many orders per channel?")
    head = "Orders by channel: a 3, b 2, c 1, none 1; 7 in all. Evidence: "
    assert en.text.startswith(head), en.text
    paid = _ask(data, SHOP, "how many orders per paid")
    assert paid.status == "answered", paid.text
    assert "yes 4" in paid.text and "no 3" in paid.text, paid.text


def test_a_cap_keeps_the_largest_groups_and_states_the_rest(data: Engine) -> None:
    # a planner's cap: the question asks nothing the plan does not carry
    res = _ask(
        data,
        SHOP,
        "how many orders per channel?",
        FixedPlanner("breakdown order group by channel limit 2"),
    )
    assert res.status == "answered", res.text
    assert _groups(res) == {"a": 3, "b": 2}
    assert res.data["other"] == 2 and res.data["total"] == 7 and res.data["truncated"]
    assert "other 2; 7 in all" in res.text
    cited = {i for g in res.data["groups"] for i in g["ids"]}
    assert cited == {"i-0000", "i-0001", "i-0002", "i-0003", "i-0004"}


_PER_CHANNEL = "how many orders per channel?"


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (_PER_CHANNEL, "count order"),  # the grouping dropped: a count
        (_PER_CHANNEL, "list order"),  # a list
        (_PER_CHANNEL, "breakdown order group by city"),  # another field
        (_PER_CHANNEL, "breakdown order group by channel, city"),  # one more key
        ("每个渠道有多少订单", "count order"),
        ("how many orders per month", "breakdown order group by shipped_at quarter"),
        ("how many orders per month", "breakdown order group by placed_on week"),
        ("how many orders per month", "breakdown order group by shipped_at quarter, channel"),
        (
            "how many orders in berlin per channel",
            "breakdown order group by channel",
        ),  # filter lost
        ("how many orders", "breakdown order group by channel"),  # groups nobody asked for
    ],
)
def test_a_careless_plan_for_a_breakdown_is_never_answered(
    data: Engine, question: str, plan: str
) -> None:
    res = _ask(data, SHOP, question, FixedPlanner(plan))
    assert res.status in {"clarify", "refused"}, (question, plan, res.status, res.text)


@pytest.mark.parametrize(
    ("plan", "subtype"),
    [
        ("breakdown order group by shipped_at year", "grain_not_allowed"),
        ("breakdown order group by card", "sensitive_field"),
        ("breakdown order group by score", "grouping_on_fact"),
        ("breakdown order group by chanel", "grouping_not_allowed"),
        ("breakdown order", "grouping_not_named"),
        ("breakdown order group by channel order by city", "sort_not_applicable"),
        ("count order group by channel", "grouping_not_applicable"),
    ],
)
def test_a_plan_that_cannot_group_is_refused_typed(data: Engine, plan: str, subtype: str) -> None:
    with pytest.raises(QdslError) as err:
        _ask(data, SHOP, _PER_CHANNEL, FixedPlanner(plan))
    assert err.value.subtype == subtype, err.value


def test_the_right_plan_from_a_planner_is_answered(data: Engine) -> None:
    res = _ask(data, SHOP, _PER_CHANNEL, FixedPlanner("breakdown order group by channel"))
    assert res.status == "answered", res.text
    assert _groups(res) == {"a": 3, "b": 2, "c": 1, "None": 1}


def _tampered(answer: Any, change: str) -> Any:
    data = copy.deepcopy(dict(answer.data))
    groups = data["groups"]
    if change == "count":
        groups[0]["value"] += 1
    elif change == "total":
        data["total"] -= 1
    elif change == "other":
        data["other"] += 1
    elif change == "truncated":
        data["truncated"] = not data["truncated"]
    elif change == "dropped":
        groups.pop()
    elif change == "swapped":
        groups[0]["keys"], groups[1]["keys"] = groups[1]["keys"], groups[0]["keys"]
    elif change == "grouping":
        data["group_by"] = [{"field": "city", "grain": None}]
    elif change == "cited":
        groups[0]["ids"] = [*groups[0]["ids"], "i-0007"]  # another tenant's row
    return answer.model_copy(update={"data": data})


@pytest.mark.parametrize(
    "change",
    ["none", "count", "total", "other", "truncated", "dropped", "swapped", "grouping", "cited"],
)
@pytest.mark.parametrize("language", ["zh", "en"])
def test_an_answer_that_disagrees_with_the_execution_is_refused(
    data: Engine, change: str, language: str
) -> None:
    plan = compile_source("breakdown order group by channel limit 3", SHOP, None).plan
    result = execute(plan, SHOP, data, "t1")
    answer = _tampered(render(plan, result, language=language, catalog=SHOP), change)
    context = VerifyContext(tenant_id="t1", now=datetime.now(UTC), catalog=SHOP)
    verdict = verify(plan, result, answer, context=context)
    if change == "none":
        assert verdict.outcome is Outcome.PASS, verdict.issues
    else:
        assert "consistent_with_result" in verdict.failed, (change, verdict.issues)
