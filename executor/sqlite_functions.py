"""SQLite functions the executor registers on every connection it uses.

Text filters compare `lower(column)` with the filter value. SQLite's built-in
lower() folds ASCII only, PostgreSQL's (on a UTF-8 database) every cased
letter, so the same plan answered differently for `ÄRGER`, `ΣΟΦΙΑ` or `ＡＢＣ`.
The executor replaces lower() on its SQLite connections with `sql_lower`, a
deterministic function that does what PostgreSQL's lower() does there: the
Unicode simple lowercase mapping, one character to one character (so `İ`
becomes `i` and `Σ` always `σ`, never the context forms of Python's full
mapping). The SQL text stays the same on both dialects.

It also registers `qdsl_period`, a breakdown's calendar period of a time value
(`executor.grains`).
"""

from __future__ import annotations

from typing import Any

from qdsl.executor.grains import SQLITE_FUNCTION, sqlite_period

# The characters whose full lowercase mapping (str.lower) differs from the simple
# one: U+0130 (full: "i" + U+0307) and Σ (full: ς at the end of a word).
_SIMPLE = str.maketrans({"\u0130": "i", "\u03a3": "\u03c3"})


def sql_lower(value: Any) -> Any:
    """lower() as PostgreSQL computes it on a UTF-8 database (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value)  # lower(123) is the text '123' in SQLite too
    return value.translate(_SIMPLE).lower()


def register_sqlite(raw: Any) -> None:
    """Install the functions on a sqlite3 connection (idempotent)."""
    raw.create_function("lower", 1, sql_lower, deterministic=True)
    raw.create_function(SQLITE_FUNCTION, 4, sqlite_period, deterministic=True)


async def aregister_sqlite(raw: Any) -> None:
    """The same on an aiosqlite connection (runs on its worker thread)."""
    await raw.create_function("lower", 1, sql_lower, deterministic=True)
    await raw.create_function(SQLITE_FUNCTION, 4, sqlite_period, deterministic=True)
