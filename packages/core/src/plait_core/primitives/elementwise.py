"""Primitives of the elementwise family (being written)."""
