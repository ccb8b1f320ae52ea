"""Primitives of the calls family (being written)."""
