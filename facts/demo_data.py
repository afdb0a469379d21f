"""The deterministic demo data set: three tenants with overlapping ids and values.

* t1: A股 projects whose market_theme facts are written "A股", "A-share" and
  "沪深A股" (some stale), 港股 projects, no 美股; tasks of project 64; run 12
  failed with error facts, run 15 the most recent failed run; zh and en doc
  passages about architecture / ingress gate / verifier / executor.
* t2: 港股 and 美股 projects and NO A股 (not even in free text).
* t3: A股 written only "A-share" / "A shares", and 300 projects with 600 tasks so
  that an unfiltered list is far beyond 24 KB of JSON.

Projects "64" and "65" exist in every tenant with different titles, statuses,
budgets and themes. Every row carries its tenant. Nothing here is random at run
time: the bulk rows of t3 come from `random.Random(DEMO_SEED)`, so two builds
are equal row for row (and, inserted into fresh databases, so are the fact ids).

The constants below describe the data for tests; they are checked against the
rows by tests/facts/test_demo_data.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dsl.catalog import Catalog, demo_catalog
from dsl.textnorm import normalize_text
from facts.demo_constants import DEMO_NOW, DEMO_SEED, DEMO_TENANTS
from facts.demo_docs import doc_rows
from facts.textindex import gram_rows

__all__ = ["DEMO_NOW", "DEMO_SEED", "DEMO_TENANTS", "DemoData", "build_demo", "t3_a_share_ids"]

# Insertion order (also the order of rows_for()).
TABLE_ORDER: tuple[str, ...] = (
    "projects",
    "tasks",
    "docs",
    "runs",
    "signals",
    "users",
    "configs",
    "semantic_facts",
    "text_grams",
)

# -- what tests may rely on -------------------------------------------------------------
T1_A_SHARE_FRESH: frozenset[str] = frozenset({"60", "61", "62", "64", "70"})
T1_A_SHARE_STALE: frozenset[str] = frozenset({"66", "67"})
T1_A_SHARE: frozenset[str] = T1_A_SHARE_FRESH | T1_A_SHARE_STALE
T1_HK: frozenset[str] = frozenset({"63", "65", "70"})
T1_HK_TEXT_ONLY: frozenset[str] = frozenset({"68"})  # 港股 in the summary, no fact
T2_HK: frozenset[str] = frozenset({"64", "81", "84"})
T2_US: frozenset[str] = frozenset({"65", "80", "83"})
T2_US_STALE: frozenset[str] = frozenset({"83"})
T3_PROJECT_COUNT = 300
T3_TASK_COUNT = 600
T1_TASKS_OF_64: frozenset[str] = frozenset({"1", "2", "3", "4", "5", "6"})
T1_FAILED_RUNS: frozenset[str] = frozenset({"12", "15"})
T1_LATEST_FAILED_RUN = "15"
T1_RUN_12_ERRORS: tuple[str, ...] = (
    "count substitution: answered the tenant's total of 14 projects instead of the 5 A股 projects",
    "stale fact used: market_theme of project 66 expired on 2026-06-30",
)


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def t3_a_share_ids() -> frozenset[str]:
    """t3 projects with an A股 fact: every 7th project, and 64."""
    return frozenset({str(i) for i in range(1, T3_PROJECT_COUNT + 1) if i % 7 == 0} | {"64"})


@dataclass(frozen=True)
class DemoData:
    tables: dict[str, list[dict[str, Any]]]

    def rows_for(self, tenant_id: str) -> dict[str, list[dict[str, Any]]]:
        return {
            name: [r for r in self.tables[name] if r["tenant_id"] == tenant_id]
            for name in TABLE_ORDER
        }

    def total_rows(self) -> int:
        return sum(len(v) for v in self.tables.values())


class _Builder:
    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLE_ORDER}

    def add(self, table: str, tenant_id: str, **values: Any) -> None:
        self.tables[table].append({"tenant_id": tenant_id, **values})

    def fact(
        self,
        tenant_id: str,
        entity_type: str,
        entity_id: str,
        predicate: str,
        value_text: str,
        *,
        source_type: str,
        source_ref: str,
        observed_at: datetime,
        valid_until: datetime | None = None,
        confidence: float = 0.9,
        value_num: float | None = None,
    ) -> None:
        self.add(
            "semantic_facts",
            tenant_id,
            entity_type=entity_type,
            entity_id=entity_id,
            predicate=predicate,
            value_text=value_text,
            value_norm=normalize_text(value_text),
            value_num=value_num,
            source_type=source_type,
            source_ref=source_ref,
            confidence=confidence,
            observed_at=observed_at,
            valid_until=valid_until,
        )

    def project(  # noqa: PLR0917 - the project tables below read as rows
        self,
        tenant_id: str,
        pid: str,
        title: str,
        summary: str,
        status: str,
        budget: float | None,
        created: str,
        theme: tuple[str, ...] = (),
        *,
        observed: str = "2026-09-15",
        valid_until: str | None = None,
    ) -> None:
        self.add(
            "projects",
            tenant_id,
            id=pid,
            title=title,
            summary=summary,
            status=status,
            budget=budget,
            owner_email=f"owner{pid}@{tenant_id}.example.com",
            created_at=_ts(created),
        )
        for i, value in enumerate(theme):
            # Alternate the evidence source between a document passage and the CRM.
            ref = "doc:17#p1" if (int(pid) + i) % 2 == 0 else f"crm:project/{pid}"
            self.fact(
                tenant_id,
                "project",
                pid,
                "market_theme",
                value,
                source_type="doc" if ref.startswith("doc:") else "crm",
                source_ref=ref,
                observed_at=_ts(observed),
                valid_until=_ts(valid_until) if valid_until else None,
            )


def _t1_projects(b: _Builder) -> None:
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


def _t2_projects(b: _Builder) -> None:
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


def _t3_bulk(b: _Builder) -> None:
    rng = random.Random(DEMO_SEED)
    a_share = t3_a_share_ids()
    base = _ts("2025-06-01")
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


def _tasks(b: _Builder) -> None:
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
            created_at=_ts(created),
            due_at=_ts(due) if due else None,
        )


def _runs_and_signals(b: _Builder) -> None:
    runs = [
        ("t1", "10", "60", "A股项目有哪些？", "succeeded", None, "2026-10-01T09:00:00"),
        ("t1", "11", "64", "项目64的任务完成了几个？", "succeeded", None, "2026-10-10T10:00:00"),
        (
            "t1",
            "12",
            None,
            "有没有A股项目？有几个？",
            "failed",
            "verifier rejected the answer: count_matches failed",
            "2026-10-20T08:30:00",
        ),
        ("t1", "13", "65", "Compare project 64 and 65", "succeeded", None, "2026-10-25T11:00:00"),
        ("t1", "14", None, "列出所有港股项目", "running", None, "2026-10-31T22:00:00"),
        (
            "t1",
            "15",
            "72",
            "Which executor tasks are overdue?",
            "failed",
            "database/timeout: statement timeout after 2000 ms",
            "2026-10-31T23:00:00",
        ),
        ("t2", "12", "65", "美股项目有几个？", "succeeded", None, "2026-10-20T08:30:00"),
        (
            "t2",
            "13",
            None,
            "Any HK projects paused?",
            "failed",
            "ingress gate refused: tenant scope mismatch",
            "2026-09-01T12:00:00",
        ),
        ("t3", "12", "64", "Is project 64 closed?", "succeeded", None, "2026-10-02T07:00:00"),
    ]
    for tenant, rid, project_id, question, status, error, started in runs:
        start = _ts(started)
        b.add(
            "runs",
            tenant,
            id=rid,
            project_id=project_id,
            question=question,
            status=status,
            error=error,
            started_at=start,
            finished_at=None if status == "running" else start + timedelta(seconds=7),
        )
    for err in T1_RUN_12_ERRORS:
        b.fact(
            "t1",
            "run",
            "12",
            "error",
            err,
            source_type="run_log",
            source_ref="run:12#log",
            observed_at=_ts("2026-10-20T08:30:07"),
            confidence=1.0,
        )
    b.fact(
        "t1",
        "run",
        "15",
        "error",
        "statement timeout after 2000 ms on the tasks list",
        source_type="run_log",
        source_ref="run:15#log",
        observed_at=_ts("2026-10-31T23:00:02"),
        confidence=1.0,
    )
    b.fact(
        "t2",
        "run",
        "13",
        "error",
        "tenant scope mismatch at the ingress gate",
        source_type="run_log",
        source_ref="run:13#log",
        observed_at=_ts("2026-09-01T12:00:01"),
        confidence=1.0,
    )
    signals = [
        ("t1", "1", "64", "alert", 4, "入口闸门拒绝率升高", "2026-10-30T08:00:00"),
        ("t1", "2", "65", "metric", 2, "quote latency p95 38 ms", "2026-10-29T08:00:00"),
        ("t1", "3", "72", "alert", 5, "executor timeouts on tasks list", "2026-10-31T23:05:00"),
        ("t1", "4", None, "note", 1, "周末维护窗口", "2026-10-20T08:00:00"),
        ("t2", "1", "64", "note", 1, "portal freeze for year end", "2026-10-01T08:00:00"),
        ("t2", "2", "65", "alert", 3, "美股期权数据延迟", "2026-10-15T08:00:00"),
        ("t3", "1", "64", "metric", 2, "closure checklist 80% complete", "2026-09-09T08:00:00"),
    ]
    for tenant, sid, project_id, kind, severity, message, created in signals:
        b.add(
            "signals",
            tenant,
            id=sid,
            project_id=project_id,
            kind=kind,
            severity=severity,
            message=message,
            created_at=_ts(created),
        )


def _users_and_configs(b: _Builder) -> None:
    people = [("1", "李伟", "admin"), ("2", "Alex Morgan", "analyst"), ("3", "张敏", "viewer")]
    for tenant in DEMO_TENANTS:
        for uid, name, role in people:
            b.add(
                "users",
                tenant,
                id=uid,
                name=name,
                email=f"user{uid}@{tenant}.example.com",
                role=role,
            )
        configs = [
            ("1", "executor.statement_timeout_ms", "2000" if tenant == "t1" else "5000"),
            ("2", "gate.max_plan_bytes", "65536"),
            ("3", "answer.language", "zh" if tenant != "t2" else "en"),
        ]
        for cid, key, value in configs:
            b.add(
                "configs",
                tenant,
                id=cid,
                key=key,
                value=value,
                secret_value=f"secret-{tenant}-{cid}",
                updated_at=_ts("2026-10-01"),
            )


def _docs(b: _Builder) -> None:
    for row in doc_rows():
        topic = row.pop("topic")
        passage = row.pop("passage")
        b.tables["docs"].append(row)
        if topic is not None:
            b.fact(
                row["tenant_id"],
                "doc",
                row["id"],
                "topic",
                topic,
                source_type="doc",
                source_ref=f"doc:{row['id']}#p{passage}",
                observed_at=_ts("2026-10-01"),
                confidence=1.0,
            )


def _grams(b: _Builder, catalog: Catalog) -> None:
    for entity_type, spec in catalog.entities.items():
        for row in b.tables.get(spec.table, []):
            b.tables["text_grams"].extend(
                gram_rows(
                    row["tenant_id"],
                    entity_type,
                    row[spec.id],
                    [row.get(c) for c in spec.text_search],
                )
            )


def build_demo(catalog: Catalog | None = None) -> DemoData:
    """Every demo row of every tenant; text_grams follow `catalog`'s text_search columns."""
    b = _Builder()
    _t1_projects(b)
    _t2_projects(b)
    _t3_bulk(b)
    _tasks(b)
    _docs(b)
    _runs_and_signals(b)
    _users_and_configs(b)
    _grams(b, catalog or demo_catalog())
    return DemoData(tables=b.tables)
