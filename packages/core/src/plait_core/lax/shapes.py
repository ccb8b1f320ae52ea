"""lax functions on dimensions."""

from plait_core.primitives.shapes import dimension_as_value

__all__ = ["dimension_as_value"]
