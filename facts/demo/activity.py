"""Demo runs (with their error facts), signals, users and configs."""

from __future__ import annotations

from datetime import timedelta

from qdsl.facts.demo.builder import Builder, ts
from qdsl.facts.demo.constants import DEMO_TENANTS, T1_RUN_12_ERRORS


def runs_and_signals(b: Builder) -> None:
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
        start = ts(started)
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
            observed_at=ts("2026-10-20T08:30:07"),
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
        observed_at=ts("2026-10-31T23:00:02"),
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
        observed_at=ts("2026-09-01T12:00:01"),
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
            created_at=ts(created),
        )


def users_and_configs(b: Builder) -> None:
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
                updated_at=ts("2026-10-01"),
            )
