"""The plan language: grammar, text and JSON forms, printer, schema, spellings, compile cache."""
