"""The demo's curated cases (tests/cases/demo.toml), computed from the demo rows."""

from __future__ import annotations

from collections import Counter
from typing import Any

from cases.demo_conditions import add_conditions
from cases.demo_rows import (
    A_SHARE,
    ABSTAIN,
    CLARIFY_OR_NOTHING,
    HK,
    TOPIC_ARCH,
    TOPIC_GATE,
    US,
    theme,
    topic,
)
from cases.oracle import CaseFile, Entity, at, between, eq, gt, is_null, ne


def build(data: dict[str, dict[str, Entity]]) -> CaseFile:  # noqa: PLR0915
    cf = CaseFile("demo", {"tenant": "t1", "now": "2026-11-01T00:00:00Z"})
    add = cf.add
    d = data["t1"]
    pj, tk, rn, doc = (d[k] for k in ("project", "task", "run", "doc"))
    y2026 = between(at(2026), at(2027), "created_at")
    a_share = theme(A_SHARE)

    # -- the table of issue 8, every row
    add("有没有日股项目", status=CLARIFY_OR_NOTHING, exists=False, mentions=["日股"])
    add("Are there any US stock projects?", **pj.exists(theme(US)))
    add("有多少个欧洲项目", status=CLARIFY_OR_NOTHING, count=0, mentions=["欧洲"])
    add("2026年创建了多少个项目", **pj.count(y2026))
    add("How many projects were created in 2026?", **pj.count(y2026))
    add("有多少个没有预算的项目", **pj.count(is_null("budget")))
    add("预算超过 20 万的项目有哪些", **pj.listing(gt("budget", 200_000)))
    add("Which tasks are assigned to Li Wei?", **tk.listing(eq("assignee", "Li Wei")))
    add(
        "Which project has the largest budget?",
        contract="entity_list",
        ids=pj.top("budget", 1, desc=True),
    )
    add("列出最近的 3 个项目", contract="entity_list", ids=pj.top("created_at", 3, desc=True))
    add(
        "项目 64 的预算是多少",
        contract="entity_snapshot",
        ids=["64"],
        fields={"budget": pj.one("64")["budget"]},
    )
    add("What is quantum computing?", status=ABSTAIN)

    # -- /work/shared/questions.md, every row
    add("帮我看看系统里面有没有 A 股项目", contract="yes_no_with_evidence", exists=True)
    add("有没有港股相关的项目？", **pj.exists(theme(HK)))
    add("Are there any A-share projects?", contract="yes_no_with_evidence", exists=True)
    add(
        "Is there a project about Hong Kong equities?", contract="yes_no_with_evidence", exists=True
    )
    add("现在有多少个项目", **pj.count())
    add("有多少个进行中的项目", **pj.count(eq("status", "active")))
    add("How many paused projects do we have?", **pj.count(eq("status", "paused")))
    add("有几个任务还没完成", **tk.count(ne("status", "done")))
    add("系统里有哪些项目", **pj.listing())
    add("列出所有暂停的项目", **pj.listing(eq("status", "paused")))
    add("Which tasks are assigned to project 64?", **tk.listing(eq("project_id", "64")))
    add(
        "项目 64 现在什么状态",
        contract="entity_snapshot",
        ids=["64"],
        fields={"status": pj.one("64")["status"]},
    )
    add(
        "What is the status of run 12?",
        contract="entity_snapshot",
        ids=["12"],
        fields={"status": rn.one("12")["status"]},
    )
    add(
        "当前系统架构是什么",
        contract="explanation_with_citations",
        ids=[r["id"] for r in doc.where(topic(TOPIC_ARCH))],
    )
    add(
        "What does the ingress gate do?",
        contract="explanation_with_citations",
        ids=[r["id"] for r in doc.where(topic(TOPIC_GATE))],
    )
    failed = sorted(rn.where(eq("status", "failed")), key=lambda r: r["started_at"])
    add("为什么刚才答错了", contract="diagnosis_with_evidence", ids=[failed[-1]["id"]])
    add("Why did run 12 fail?", contract="diagnosis_with_evidence", ids=["12"])
    add("项目 64 和 65 有什么区别", contract="comparison_with_basis", ids=["64", "65"])
    add("Compare project 64 with project 65", contract="comparison_with_basis", ids=["64", "65"])
    add("嗯", status="clarify")
    add("帮我看看", status="clarify")
    for text in (
        "A",
        "B",
        "C",
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
    ):
        add(text, status="gated")
    add("有多少个港股项目", **pj.count(theme(HK)))

    add_conditions(cf, data)

    # -- issue 20: a sum or an average of a field the catalog lets be aggregated is
    # answered (issue 22); a breakdown clarifies, naming the word
    add("What is the total budget of A-share projects?", **pj.aggregate("budget", "sum", a_share))
    add("所有项目的预算合计是多少", **pj.aggregate("budget", "sum"))
    add("项目的平均预算是多少", **pj.aggregate("budget", "avg"))
    add("How many tasks does each project have?", status=["clarify"], mentions=["each"])
    # a count per group is a breakdown
    add("How many projects by status?", **_per_status(pj))
    # ... and where the same words ask nothing more
    add("每个项目的状态", **pj.listing())
    add("List every project", **pj.listing())
    add("What is the total number of projects?", **pj.count())
    return cf


def _per_status(pj: Entity) -> dict[str, Any]:
    by_status = Counter(str(r["status"]) for r in pj.rows)
    groups = {k: float(v) for k, v in sorted(by_status.items())}
    return {"contract": "breakdown_table", "groups": groups}


HEADER = """
Curated questions for the demo (qdsl demo init), tenants t1 and t2, clock
2026-11-01T00:00:00Z: every row of issue 8's table and of
/work/shared/questions.md, then conditions of every kind. Expectations were
computed from the rows by hand-written filters (tests/cases/build_cases.py),
never copied from qdsl. Run: qdsl eval tests/cases/demo.toml
status = ["answered", "clarify"]: a clarification is right too, where the
question holds a word no catalog maps, a name the tenant's data lacks, or a
field or operator the catalog does not give (the answer, if one leaves, must
still be exactly right).
"""
