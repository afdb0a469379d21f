"""`qdsl` whose JMESPath evaluation fails unexpectedly on the expression
`explode`, with the stored envelope in its frame's locals and in the message:
what a defect reading a tenant's ref looks like to the server's log. It runs
under `capped`'s address-space cap.

    python -m faulty_refs mcp --tenant t1   (PYTHONPATH: this directory)
"""

from __future__ import annotations

from typing import Any

import capped  # noqa: F401 - the address-space cap, set on import

from qdsl.envelope import jmes

_search = jmes.search


def faulty_search(expression: str, document: Any, **kwargs: Any) -> Any:
    if expression == "explode":
        envelope = document  # a local a traceback with locals would print
        raise RuntimeError(f"failed on {envelope!r}")
    return _search(expression, document, **kwargs)


jmes.search = faulty_search

if __name__ == "__main__":
    from qdsl.cli.fast import main

    main()
