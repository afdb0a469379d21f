"""The demo's rows, read with sqlite3, and the predicates the demo cases are written with."""

from __future__ import annotations

from typing import Any

from cases.oracle import Entity, parse_time, read_table

TENANTS = ("t1", "t2")
CLARIFY_OR_NOTHING = ["clarify", "answered"]
ABSTAIN = ["clarify", "insufficient_evidence", "not_covered"]
TIMES = {"created_at", "due_at", "started_at", "finished_at", "updated_at"}
READ_ALL = {
    "project": "SELECT * FROM projects",
    "task": "SELECT * FROM tasks",
    "run": "SELECT * FROM runs",
    "signal": "SELECT * FROM signals",
    "user": "SELECT * FROM users",
    "config": "SELECT * FROM configs",
    "doc": "SELECT * FROM docs",
}


def load(sqlite_path: str) -> dict[str, dict[str, Entity]]:
    facts = read_table(sqlite_path, "SELECT * FROM semantic_facts")
    out: dict[str, dict[str, Entity]] = {}
    for tenant in TENANTS:
        tables: dict[str, Entity] = {}
        for entity, sql in READ_ALL.items():
            rows = [r for r in read_table(sqlite_path, sql) if r["tenant_id"] == tenant]
            for r in rows:
                for key in TIMES & set(r):
                    r[key] = parse_time(r[key])
                r["facts"] = [
                    f
                    for f in facts
                    if f["tenant_id"] == tenant
                    and f["entity_type"] == entity
                    and f["entity_id"] == r["id"]
                ]
            tables[entity] = Entity(rows)
        out[tenant] = tables
    return out


# The catalog's alias groups of market_theme (dsl/demo_catalog.toml), spelled out here.
A_SHARE = {"a股", "a-share", "a shares", "a-shares", "a share", "沪深a股", "china a-share"}
HK = {
    "港股",
    "h股",
    "hong kong equities",
    "hong kong stocks",
    "hk equities",
    "hk stocks",
    "香港股票",
}
US = {"美股", "us equities", "us stocks", "美国股票"}
TOPIC_ARCH = {"architecture", "架构", "系统架构", "system architecture", "design"}
TOPIC_GATE = {"ingress_gate", "ingress gate", "入口闸门", "gate", "闸门"}


def theme(spellings: set[str]) -> Any:
    return lambda r: any(
        f["predicate"] == "market_theme" and f["value_text"].casefold() in spellings
        for f in r["facts"]
    )


def not_theme(spellings: set[str]) -> Any:
    inner = theme(spellings)
    return lambda r: not inner(r)


def topic(spellings: set[str]) -> Any:
    return lambda r: any(
        f["predicate"] == "topic" and f["value_text"].casefold() in spellings for f in r["facts"]
    )


def title_has(text: str) -> Any:
    return lambda r: text.casefold() in r["title"].casefold()
