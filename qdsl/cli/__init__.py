"""The `qdsl` command line (SPEC 7)."""
