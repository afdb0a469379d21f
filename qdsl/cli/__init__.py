"""The `qdsl` command line (docs/cli.md)."""
