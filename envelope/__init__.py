"""The one output path of the CLI: envelopes, size budget, ref store (docs/envelopes.md)."""

from qdsl.envelope.emit import emit_error, emit_success

__all__ = ["emit_error", "emit_success"]
