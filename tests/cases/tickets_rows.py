"""The support desk's rows (read with sqlite3) and the predicates its cases use."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from cases.oracle import (
    Entity,
    at,
    parse_time,
    read_table,
)

NOW = at(2026, 6, 15, 12)
TENANTS = ("acme", "globex")
CLARIFY_OR_NOTHING = ["clarify", "answered"]
ABSTAIN = ["clarify", "insufficient_evidence", "not_covered"]


def load(sqlite_path: str, catalog_path: Path) -> dict[str, dict[str, Entity]]:
    """Per tenant: ticket rows (with their product areas), agent rows, article rows."""
    aliases = tomllib.loads(catalog_path.read_text(encoding="utf-8"))["entities"]["ticket"][
        "fields"
    ]["product_area"]["aliases"]
    canonical = {s.casefold(): canon for canon, spellings in aliases.items() for s in spellings}
    facts = read_table(sqlite_path, "SELECT * FROM semantic_facts")
    out: dict[str, dict[str, Entity]] = {}
    for tenant in TENANTS:
        areas: dict[str, set[str]] = {}
        for f in facts:
            if f["tenant_id"] == tenant and f["predicate"] == "product_area":
                areas.setdefault(f["entity_id"], set()).add(canonical[f["value_text"].casefold()])
        tickets = read_table(sqlite_path, "SELECT * FROM tickets")
        agents = read_table(sqlite_path, "SELECT * FROM agents")
        articles = read_table(sqlite_path, "SELECT * FROM kb_articles")
        mine = [t for t in tickets if t["tenant_id"] == tenant]
        for t in mine:
            t["opened_at"] = parse_time(t["opened_at"])
            t["closed_at"] = parse_time(t["closed_at"])
            t["areas"] = areas.get(t["id"], set())
        staff = [a for a in agents if a["tenant_id"] == tenant]
        for a in staff:
            a["hired_at"] = parse_time(a["hired_at"])
        out[tenant] = {
            "ticket": Entity(mine),
            "agent": Entity(staff),
            "article": Entity([a for a in articles if a["tenant_id"] == tenant]),
        }
    return out


def area(name: str) -> Any:
    return lambda r: name in r["areas"]


def not_area(name: str) -> Any:
    return lambda r: name not in r["areas"]
