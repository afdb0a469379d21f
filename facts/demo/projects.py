"""Demo projects and tasks: t1's and t2's hand-written rows and t3's seeded bulk."""

from __future__ import annotations

import random
from datetime import timedelta

from qdsl.facts.demo.builder import Builder, ts
from qdsl.facts.demo.constants import DEMO_SEED, T3_PROJECT_COUNT, T3_TASK_COUNT, t3_a_share_ids


def t1_projects(b: Builder) -> None:
    p = b.project
    p(
        "t1",
        "60",
        "A股量化选股平台",
        "面向沪深市场的多因子选股与回测平台。",
        "active",
        300000,
        "2026-01-10",
        ("A股",),
    )
    p(
        "t1",
        "61",
        "China A-share factor research",
        "Factor library and daily rebalancing for mainland equities.",
        "active",
        180000,
        "2026-02-03",
        ("A-share",),
    )
    p(
        "t1",
        "62",
        "沪深A股盘后风控",
        "盘后风险敞口计算与限额告警。",
        "paused",
        95000,
        "2026-03-12",
        ("沪深A股",),
    )
    p(
        "t1",
        "63",
        "港股通资金流监控",
        "南向资金流入流出的日度监控看板。",
        "active",
        120000,
        "2026-04-01",
        ("港股",),
    )
    p(
        "t1",
        "64",
        "Ingress gate rollout",
        "Roll out the ingress gate for the research assistant; covers A-share desks first.",
        "active",
        250000,
        "2026-05-20",
        ("A-share",),
    )
    p(
        "t1",
        "65",
        "HK equities market making",
        "Quoting engine for Hong Kong listed equities.",
        "paused",
        410000,
        "2026-05-21",
        ("HK equities",),
    )
    p(
        "t1",
        "66",
        "A股打新回测",
        "新股申购收益的历史回测（旧项目）。",
        "closed",
        40000,
        "2025-11-02",
        ("A股",),
        observed="2026-01-05",
        valid_until="2026-06-30",
    )
    p(
        "t1",
        "67",
        "A-share dividend screener",
        "Dividend yield screening, last reviewed in spring.",
        "closed",
        30000,
        "2025-12-15",
        ("A-share",),
        observed="2026-03-01",
    )
    p(
        "t1",
        "68",
        "跨境研究笔记",
        "整理港股与海外市场的研究笔记，暂无分类。",
        "active",
        None,
        "2026-06-08",
    )
    p(
        "t1",
        "69",
        "内部知识库迁移",
        "Wiki migration to the new document store.",
        "active",
        60000,
        "2026-07-01",
    )
    p(
        "t1",
        "70",
        "AH股溢价套利",
        "同时在沪深A股与H股上市的公司价差跟踪。",
        "active",
        220000,
        "2026-08-19",
        ("沪深A股", "H股"),
    )
    p(
        "t1",
        "71",
        "Verifier hardening",
        "Make the answer verifier reject total-count substitution.",
        "active",
        75000,
        "2026-09-01",
    )
    p(
        "t1",
        "72",
        "Executor timeouts",
        "Statement timeout and cancellation for the bounded executor.",
        "paused",
        50000,
        "2026-09-20",
    )
    p("t1", "73", "季度报告自动化", "自动生成季度经营报告。", "closed", 20000, "2026-02-14")


def t2_projects(b: Builder) -> None:
    p = b.project
    p(
        "t2",
        "64",
        "Hong Kong stocks research portal",
        "Research portal for Hong Kong listed companies.",
        "closed",
        90000,
        "2026-03-03",
        ("Hong Kong stocks",),
    )
    p(
        "t2",
        "65",
        "US equities options desk",
        "Options analytics for US listed equities.",
        "active",
        500000,
        "2026-03-04",
        ("US equities",),
    )
    p(
        "t2",
        "80",
        "美股财报日历",
        "美国上市公司的财报日程与预期整理。",
        "active",
        70000,
        "2026-04-10",
        ("美股",),
    )
    p("t2", "81", "H股分红跟踪", "H股公司派息记录。", "paused", 45000, "2026-05-05", ("H股",))
    p(
        "t2",
        "82",
        "客户门户改版",
        "Customer portal redesign, no market exposure.",
        "active",
        150000,
        "2026-06-06",
    )
    p(
        "t2",
        "83",
        "US stocks sentiment feed",
        "News sentiment for US stocks, stale vendor feed.",
        "closed",
        25000,
        "2025-10-10",
        ("US stocks",),
        observed="2026-02-01",
        valid_until="2026-05-01",
    )
    p("t2", "84", "港股做市", "香港市场做市系统。", "active", 330000, "2026-08-08", ("港股",))


_T3_TOPICS = (
    ("cross-border settlement reconciliation", "跨境结算对账"),
    ("client onboarding and KYC refresh", "客户开户与KYC复核"),
    ("market data vendor consolidation", "行情数据供应商整合"),
    ("risk limit recalibration", "风险限额重新校准"),
    ("research report distribution", "研究报告分发"),
    ("trade surveillance tuning", "交易监控调优"),
    ("portfolio attribution rebuild", "组合归因重建"),
    ("regulatory filing automation", "监管报送自动化"),
)
_T3_PHASES = ("discovery", "build", "pilot", "rollout", "hardening", "retirement")
_T3_STATUSES = ("active", "paused", "closed")
_T3_TASK_STATUSES = ("todo", "doing", "done", "blocked")
_T3_PEOPLE = ("Li Wei", "Zhang Min", "Chen Jing", "Alex Morgan", "Priya Nair", "Wang Fang")


def t3_bulk(b: Builder) -> None:
    rng = random.Random(DEMO_SEED)
    a_share = t3_a_share_ids()
    base = ts("2025-06-01")
    for i in range(1, T3_PROJECT_COUNT + 1):
        pid = str(i)
        en, zh = rng.choice(_T3_TOPICS)
        phase = rng.choice(_T3_PHASES)
        title = f"Project {i:04d} - {en} ({phase} phase) / {zh}"
        summary = (
            f"Workstream {i} covers {en} for the {phase} phase: scope agreed with the "
            f"business, {rng.randint(2, 9)} milestones planned, owner team "
            f"{rng.choice(_T3_PEOPLE)}. {zh}，第{rng.randint(1, 4)}季度交付。"
        )
        theme: tuple[str, ...] = ()
        if pid in a_share:
            theme = ("A shares",) if i % 2 == 0 else ("A-share",)
        status = "closed" if pid == "64" else ("active" if pid == "65" else None)
        b.project(
            "t3",
            pid,
            title,
            summary,
            status or rng.choice(_T3_STATUSES),
            float(rng.randint(1, 80) * 5000),
            (base + timedelta(days=i, hours=rng.randint(0, 23))).isoformat()[:19],
            theme,
        )
    for j in range(1, T3_TASK_COUNT + 1):
        project_id = str((j - 1) // 2 + 1)
        en, zh = rng.choice(_T3_TOPICS)
        created = base + timedelta(days=(j + 1) // 2, hours=rng.randint(0, 23))
        b.add(
            "tasks",
            "t3",
            id=str(j),
            project_id=project_id,
            title=f"Task {j:04d} for project {project_id}: {en} checklist item / {zh}检查项",
            status=rng.choice(_T3_TASK_STATUSES),
            assignee=rng.choice(_T3_PEOPLE),
            created_at=created,
            due_at=created + timedelta(days=rng.randint(7, 60)),
        )


def tasks(b: Builder) -> None:
    rows = [
        # tenant, id, project, title, status, assignee, created, due
        ("t1", "1", "64", "编写入口闸门设计文档", "done", "Li Wei", "2026-05-21", "2026-06-01"),
        ("t1", "2", "64", "Gate rule test suite", "done", "Alex Morgan", "2026-05-22", None),
        ("t1", "3", "64", "灰度发布到A股研究组", "doing", "Zhang Min", "2026-06-02", "2026-11-15"),
        ("t1", "4", "64", "Latency budget review", "doing", "Priya Nair", "2026-06-10", None),
        ("t1", "5", "64", "回滚预案", "todo", "Li Wei", "2026-07-01", "2026-12-01"),
        ("t1", "6", "64", "Security sign-off", "blocked", "Chen Jing", "2026-07-02", None),
        ("t1", "7", "65", "Quote throttling", "doing", "Alex Morgan", "2026-06-01", None),
        ("t1", "8", "71", "Count substitution check", "done", "Priya Nair", "2026-09-02", None),
        ("t1", "9", "72", "statement_timeout 配置", "todo", "Zhang Min", "2026-09-21", None),
        ("t2", "1", "64", "Portal search", "done", "Wang Fang", "2026-03-05", None),
        ("t2", "2", "64", "Portal login", "done", "Wang Fang", "2026-03-06", None),
        ("t2", "3", "65", "Greeks dashboard", "doing", "Alex Morgan", "2026-03-08", None),
        ("t2", "4", "80", "财报日历数据源", "todo", "Chen Jing", "2026-04-11", "2026-12-31"),
    ]
    for tenant, tid, project_id, title, status, assignee, created, due in rows:
        b.add(
            "tasks",
            tenant,
            id=tid,
            project_id=project_id,
            title=title,
            status=status,
            assignee=assignee,
            created_at=ts(created),
            due_at=ts(due) if due else None,
        )
