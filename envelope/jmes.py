"""JMESPath over stored envelopes, with qdsl's errors.

jmespath is the de-facto standard query language for JSON documents (AWS CLI,
Ansible), with a spec and a compliance suite; hand-rolling a path language
would give agents one more dialect to learn.
"""

from __future__ import annotations

from typing import Any

from qdsl.dsl.errors import UsageError


def search(expression: str, document: Any) -> Any:
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.search(expression, document)
    except JMESPathError as exc:
        raise UsageError(
            "bad_expression",
            f"not a valid JMESPath expression: {expression!r} ({type(exc).__name__})",
            hint="for example data.items[0].id or data.items[*].id; see jmespath.org",
        ) from None
