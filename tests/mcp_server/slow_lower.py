"""`qdsl`, with the SQLite lower() of the executor's connections made slow and
counted: a text filter's statement then runs long enough to time out or be
cancelled mid-way, and the count shows whether it goes on.

    python -m slow_lower --db URL mcp --tenant t3   (PYTHONPATH: this directory)

Each call of lower() (one per row a text filter reads) appends one byte to
the file `QDSL_TEST_LOWER_COUNTER` names, then sleeps `QDSL_TEST_LOWER_PAUSE_S`
seconds. SQLite checks for an interrupt between rows: a statement stopped
mid-way leaves fewer bytes than the rows it reads, and no more later.
"""

from __future__ import annotations

import os
import time
from typing import Any

from qdsl.executor import sqlite_functions

_fast = sqlite_functions.sql_lower
_counter = os.open(
    os.environ["QDSL_TEST_LOWER_COUNTER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
)
_pause = float(os.environ.get("QDSL_TEST_LOWER_PAUSE_S", "0.05"))


def slow_lower(value: Any) -> Any:
    os.write(_counter, b".")
    time.sleep(_pause)
    return _fast(value)


# register_sqlite installs whatever the module holds when a connection opens
sqlite_functions.sql_lower = slow_lower

if __name__ == "__main__":
    from qdsl.cli.fast import main

    main()
