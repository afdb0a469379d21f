"""`qdsl demo`: answer a handful of real questions over the embedded SQLite demo.

The demo database is created (migrated and seeded) on first use in the state
directory, so this runs on a fresh machine with no server.
"""

from __future__ import annotations

import sys

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


def main() -> int:
    from qdsl import plan_and_answer

    out = sys.stdout
    for tenant, question in QUESTIONS:
        result = plan_and_answer(question, tenant_id=tenant)
        verdict = result.verdict.outcome if result.verdict is not None else "-"
        out.write(f"\n[{tenant}] {question}\n")
        out.write(
            f"  status={result.status}  contract={result.answer_contract}  "
            f"verdict={verdict}  evidence={len(result.evidence)}\n"
        )
        for line in (result.text or "").splitlines()[:6]:
            out.write(f"  > {line}\n")
    out.write("\nEvery answer above passed the verifier or says why it could not be given.\n")
    out.write("Try: .venv/bin/qdsl --json ask --tenant t1 '有没有港股相关的项目？'\n")
    return 0
