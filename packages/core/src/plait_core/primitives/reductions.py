"""Primitives of the reductions family (being written)."""
