"""`qdsl demo`: answer a handful of real questions over the embedded SQLite demo.

The demo database is created (migrated and seeded) on first use in the state
directory, so this runs on a fresh machine with no server; `qdsl --db URL demo`
runs it over that database instead. `answers()` gives
one summary per question (the `--json` envelope's data); `main()` prints them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

QUESTIONS: tuple[tuple[str, str], ...] = (
    ("t1", "帮我看看系统里面有没有 A 股项目"),
    ("t2", "帮我看看系统里面有没有 A 股项目"),
    ("t3", "Are there any A-share projects?"),
    ("t1", "现在有多少个项目"),
    ("t1", "有多少个进行中的项目"),
    ("t1", "项目 64 现在什么状态"),
    ("t1", "项目 64 和 65 有什么区别"),
    ("t1", "Why did run 12 fail?"),
    ("t1", "当前系统架构是什么"),
    ("t1", "确认"),
    ("t1", "帮我看看"),
)


def answers(engine: Engine | None = None) -> list[dict[str, Any]]:
    """One summary per question, over `engine` (default: the embedded demo)."""
    from qdsl import plan_and_answer

    out: list[dict[str, Any]] = []
    for tenant, question in QUESTIONS:
        result = plan_and_answer(question, tenant_id=tenant, engine=engine)
        out.append(
            {
                "tenant": tenant,
                "question": question,
                "status": result.status,
                "answer_contract": result.answer_contract.value if result.answer_contract else None,
                "verdict": result.verdict.outcome.value if result.verdict is not None else None,
                "evidence": len(result.evidence),
                "text": result.text,
                "trace_id": result.trace_id,
            }
        )
    return out


def render(rows: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for row in rows:
        lines += [
            "",
            f"[{row['tenant']}] {row['question']}",
            f"  status={row['status']}  contract={row['answer_contract']}  "
            f"verdict={row['verdict'] or '-'}  evidence={row['evidence']}",
        ]
        lines += [f"  > {line}" for line in (row["text"] or "").splitlines()[:6]]
    lines += [
        "",
        "Every answer above passed the verifier or says why it could not be given.",
        "Try: .venv/bin/qdsl --json ask --tenant t1 '有没有港股相关的项目？'",
    ]
    return "\n".join(lines) + "\n"


def main(engine: Engine | None = None) -> int:
    sys.stdout.write(render(answers(engine)))
    return 0
