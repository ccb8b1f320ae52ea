"""Primitives of the structural family (being written)."""
