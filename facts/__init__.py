"""facts package."""
