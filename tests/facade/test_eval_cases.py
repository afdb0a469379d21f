"""`qdsl eval` over the curated case files: no wrong answer, and the rule planner right on ≥ 90%.

tests/cases/demo.toml runs on the demo, tests/cases/tickets.toml on the support
desk (tests/deployments/tickets/), tests/cases/shop.toml on the online shop
(tests/deployments/shop/), each on SQLite and PostgreSQL. The shop asserts no
wrong answer, and its relation filters, counts per group and measures per group
right; what the plan language cannot state yet (a grouping across a relation, a
path of three relations) must abstain. The files'
expectations come from hand-written filters over the rows (tests/cases/*_oracle.py);
the first test proves the files still match the rows they were computed from.
"""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from cases.build_cases import (
    DEMO_FILE,
    SHOP_FILE,
    TICKETS_FILE,
    demo_text,
    shop_text,
    tickets_text,
)
from click.testing import CliRunner
from deployments.fixtures import TICKETS_CATALOG
from deployments.shop import SHOP_CATALOG

from qdsl.cli.main import cli

RIGHT_AT_LEAST = 0.90
# "orders of customers in Berlin", "有退款的订单", "Which orders did Felix Hoffmann
# place?", "包含 Garden Hose 的订单有哪些", "有没有未支付的订单" (no related row),
# ... on both tenants; "Which products has
# Felix Hoffmann bought?" (three relations away) stays safe
SHOP_RELATION_CASES = {
    f"shop-{n:03d}" for n in (83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 95, 96, 97, 98)
} | {
    f"shop-{n:03d}" for n in (181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 193, 194, 195, 196)
}
SHOP_TOO_FAR_CASES = {f"shop-{n:03d}" for n in (93, 94, 191, 192)}


def _sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite+pysqlite:///")


# counts per group (breakdowns), per tenant: the rule planner answers them
SHOP_BREAKDOWN_CASES = {
    f"shop-{n:03d}" for n in (67, 68, 75, 76, 77, 78, 165, 166, 173, 174, 175, 176)
}
# a measure per group ("What is the total paid per payment method?"), and groups
# across relations ("每个客户有多少订单", "the total paid by customer tier"), per tenant
SHOP_MEASURE_GROUP_CASES = {
    f"shop-{n:03d}" for n in (69, 70, 73, 74, 80, 81, 82, 167, 168, 171, 172, 178, 179, 180)
}
# a declared product measure ranked over a related entity ("Top 5 products by revenue",
# "销售额最高的 5 个商品"), per tenant
SHOP_RANKED_MEASURE_CASES = {f"shop-{n:03d}" for n in (71, 72, 169, 170)}


def test_case_files_match_their_rows(
    sqlite_url: str, tickets_sqlite_path: str, shop_sqlite_path: str
) -> None:
    assert DEMO_FILE.read_text(encoding="utf-8") == demo_text(_sqlite_path(sqlite_url)), (
        "tests/cases/demo.toml is stale: run tests/cases/build_cases.py"
    )
    assert TICKETS_FILE.read_text(encoding="utf-8") == tickets_text(tickets_sqlite_path), (
        "tests/cases/tickets.toml is stale: run tests/cases/build_cases.py"
    )
    assert SHOP_FILE.read_text(encoding="utf-8") == shop_text(shop_sqlite_path), (
        "tests/cases/shop.toml is stale: run tests/cases/build_cases.py"
    )


def test_the_cases_are_many_and_half_chinese() -> None:
    questions = [
        case["question"]
        for path in (DEMO_FILE, TICKETS_FILE)
        for case in tomllib.loads(path.read_text(encoding="utf-8"))["case"]
    ]
    zh = sum(bool(re.search(r"[\u4e00-\u9fff]", q)) for q in questions)
    assert len(questions) >= 300
    assert abs(zh - (len(questions) - zh)) <= len(questions) // 10


def test_the_shop_cases_are_many_half_chinese_and_of_every_shape() -> None:
    cases = tomllib.loads(SHOP_FILE.read_text(encoding="utf-8"))["case"]
    zh = sum(bool(re.search(r"[\u4e00-\u9fff]", c["question"])) for c in cases)
    assert len(cases) >= 150 and zh * 2 == len(cases)
    contracts = {c["expect"].get("contract") for c in cases}
    assert {"aggregate_with_basis", "breakdown_table", "entity_list", "count_scalar"} <= contracts
    assert {c.get("tenant", "nordwind") for c in cases} == {"nordwind", "sunrise"}


@pytest.mark.parametrize("deployment", ["demo", "tickets", "shop"])
def test_curated_cases_leave_no_wrong_answer(
    deployment: str,
    dialect: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("QDSL_REF_THRESHOLD", "0")  # the whole report on stdout
    if deployment == "demo":
        url = request.getfixturevalue("sqlite_url" if dialect == "sqlite" else "pg_url")
        args = ["--db", url, "eval", str(DEMO_FILE)]
    elif deployment == "tickets":
        url = request.getfixturevalue(
            "tickets_sqlite_url" if dialect == "sqlite" else "tickets_pg_url"
        )
        args = ["--db", url, "--catalog", str(TICKETS_CATALOG), "eval", str(TICKETS_FILE)]
    else:
        url = request.getfixturevalue("shop_sqlite_url" if dialect == "sqlite" else "shop_pg_url")
        args = ["--db", url, "--catalog", str(SHOP_CATALOG), "eval", str(SHOP_FILE)]
    res = CliRunner().invoke(cli, ["--json", *args])
    assert res.exit_code in (0, 5), res.output
    data = json.loads(res.stdout)["data"]
    wrong = [
        f"{r['id']} [{r['tenant']}] {r['question']} -> {r['status']}: {r['text'][:160]} "
        f"({'; '.join(r['reasons'])})"
        for r in data["results"]
        if r["verdict"] == "wrong"
    ]
    summary = (
        f"{deployment}/{dialect}: {data['cases']} cases, {data['right']} right "
        f"({100 * data['right_rate']:.1f}%), {data['safe']} safe, {data['wrong']} wrong; "
        f"reliability {data['reliability']}"
    )
    with capsys.disabled():
        print(f"\n{summary}")
    assert not wrong, summary + "\n" + "\n".join(wrong)
    if deployment == "shop":
        right = {r["id"] for r in data["results"] if r["verdict"] == "right"}
        # the relation filters are stated (conditions across declared relations)
        assert right >= SHOP_RELATION_CASES, sorted(SHOP_RELATION_CASES - right)
        far = {r["id"]: r for r in data["results"] if r["id"] in SHOP_TOO_FAR_CASES}
        assert {r["verdict"] for r in far.values()} == {"safe"}, far
        # with the reason: too many relations away, not an unknown word
        assert all(
            r["status"] == "clarify" and ("two relations" in r["text"] or "两层以上" in r["text"])
            for r in far.values()
        ), far
        assert right >= SHOP_BREAKDOWN_CASES, sorted(SHOP_BREAKDOWN_CASES - right)
        assert right >= SHOP_MEASURE_GROUP_CASES, sorted(SHOP_MEASURE_GROUP_CASES - right)
        assert right >= SHOP_RANKED_MEASURE_CASES, sorted(SHOP_RANKED_MEASURE_CASES - right)
        return  # the rest abstains where the plan language cannot state it yet
    assert data["right_rate"] >= RIGHT_AT_LEAST, summary
    assert res.exit_code == 0


def test_the_files_name_every_row_of_the_issue_table() -> None:
    questions = {c["question"] for c in tomllib.loads(DEMO_FILE.read_text("utf-8"))["case"]}
    issue_rows = {
        "有没有日股项目",
        "Are there any US stock projects?",
        "有多少个欧洲项目",
        "2026年创建了多少个项目",
        "How many projects were created in 2026?",
        "有多少个没有预算的项目",
        "预算超过 20 万的项目有哪些",
        "Which tasks are assigned to Li Wei?",
        "Which project has the largest budget?",
        "列出最近的 3 个项目",
        "项目 64 的预算是多少",
        "What is quantum computing?",
    }
    assert issue_rows <= questions
    # the sample questions handed to every deployment (questions.md)
    sample = {
        "帮我看看系统里面有没有 A 股项目",
        "有没有港股相关的项目？",
        "Are there any A-share projects?",
        "Is there a project about Hong Kong equities?",
        "现在有多少个项目",
        "有多少个进行中的项目",
        "How many paused projects do we have?",
        "有几个任务还没完成",
        "系统里有哪些项目",
        "列出所有暂停的项目",
        "Which tasks are assigned to project 64?",
        "项目 64 现在什么状态",
        "What is the status of run 12?",
        "当前系统架构是什么",
        "What does the ingress gate do?",
        "为什么刚才答错了",
        "Why did run 12 fail?",
        "项目 64 和 65 有什么区别",
        "Compare project 64 with project 65",
        "嗯",
        "帮我看看",
        "选 B",
        "确认",
        "好的",
        "继续",
        "ok",
        "yes",
        "退出需求模式",
        "exit plan mode",
        "接入外部来源继续核实",
        "再出一版草稿",
        "有多少个港股项目",
    }
    assert sample <= questions
