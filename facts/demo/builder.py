"""The demo builder: rows per table, the fact and project helpers, the DemoData result."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qdsl.dsl.textnorm import normalize_text

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


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


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


class Builder:
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
            created_at=ts(created),
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
                observed_at=ts(observed),
                valid_until=ts(valid_until) if valid_until else None,
            )
