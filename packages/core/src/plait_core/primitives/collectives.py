"""Primitives of the collectives family (being written)."""
