"""Column types as declared, where SQLite's reflection loses them.

SQLite keeps a column's declared type as text and SQLAlchemy maps an unknown
declaration by affinity: `TIMESTAMP WITH TIME ZONE` (portable DDL) reflects as
NUMERIC. The declaration, read back with `pragma_table_info`, says what the
column holds; the checks, the catalog draft and the executor's storage
(`qdsl.facts.storage`, where this lives) read types through here.
"""

from __future__ import annotations

from qdsl.facts.storage import reflected_columns

__all__ = ["reflected_columns"]
