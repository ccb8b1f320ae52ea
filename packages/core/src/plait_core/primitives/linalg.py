"""Primitives of the linalg family (being written)."""
