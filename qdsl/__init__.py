"""qdsl: questions to whitelisted, tenant-bound, verified answers.

Public API: `plan_and_answer`, `aplan_and_answer`. Imports are lazy so that the
CLI starts fast.
"""

from __future__ import annotations

from typing import Any

__all__ = ["aplan_and_answer", "plan_and_answer"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from qdsl import api

        return getattr(api, name)
    raise AttributeError(name)
