"""`meta.next`: suggested next operations with ready inputs (docs/envelopes.md).

Each suggestion is `{"operation", "argv", "input", "why"}`: `argv` runs it as
a command, and `{"op": operation, "input": input}` is a ready `qdsl chain`
step.
"""

from __future__ import annotations

import json
import re
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def next_op(
    operation: str,
    argv: list[str],
    *,
    input: dict[str, Any] | None = None,
    why: str | None = None,
) -> dict[str, Any]:
    op: dict[str, Any] = {"operation": operation, "argv": argv}
    if input is not None:
        op["input"] = input
    if why:
        op["why"] = why
    return op


def refs_get_op(
    ref_id: str, expr: str = "data", why: str | None = None, *, tenant: str | None = None
) -> dict[str, Any]:
    """`refs get`; a ref made for a tenant is read with that `--tenant`."""
    argv = ["qdsl", "--json", "refs", "get"]
    step: dict[str, Any] = {"ref": ref_id, "expr": expr}
    if tenant is not None:
        argv += ["--tenant", tenant]
        step["tenant"] = tenant
    return next_op(
        "refs get",
        [*argv, ref_id, expr],
        input=step,
        why=why or "read the full stored result (JMESPath)",
    )


def status_of_first_item(
    items: list[Any], entity_type: str, tenant: str | None, *, operation: str = "run"
) -> list[dict[str, Any]]:
    """After a list: the status plan of its first item, as a JSON plan."""
    if not items or not isinstance(items[0], dict) or "id" not in items[0]:
        return []
    plan = {
        "query_type": "status",
        "entity_type": entity_type,
        "filters": [{"field": "id", "operator": "equals", "value": str(items[0]["id"])}],
    }
    plan_json = json.dumps(plan, ensure_ascii=False, separators=(",", ":"))
    argv = ["qdsl", "--json", operation]
    if tenant:
        argv += ["--tenant", tenant]
    input: dict[str, Any] = {"plan": plan}
    if tenant:
        input["tenant"] = tenant
    return [
        next_op(
            operation,
            [*argv, "--input-json", plan_json],
            input=input,
            why=f"the status of the first {entity_type} listed",
        )
    ]


def jmes_key(key: str) -> str:
    return key if _IDENT.match(key) else json.dumps(key, ensure_ascii=False)


def first_list_path(value: Any, prefix: str = "data", depth: int = 0) -> str | None:
    """A JMESPath to the first element of the first non-trivial list, if any."""
    if isinstance(value, list) and len(value) >= 2:
        return f"{prefix}[0]"
    if isinstance(value, dict) and depth < 4:
        for key, child in value.items():
            found = first_list_path(child, f"{prefix}.{jmes_key(str(key))}", depth + 1)
            if found:
                return found
    return None
