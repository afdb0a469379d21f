"""Facts and data: the schema (facts.tables), migrations (facts.db.upgrade over the
repository's alembic/), the demo deployment (facts.demo), the n-gram fallback
text index (facts.textindex), the value index and facts loading."""
