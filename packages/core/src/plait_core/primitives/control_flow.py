"""Primitives of the control_flow family (being written)."""
