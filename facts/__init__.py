"""Facts and data: the schema (facts.tables), migrations (facts.db.upgrade over the
repository's alembic/), the demo data set (facts.demo_data), the n-gram fallback
text index (facts.textindex) and the facts read model (facts.repository)."""
