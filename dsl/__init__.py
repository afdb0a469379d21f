"""dsl package."""
