"""The error ``shapecheck`` and ``mask`` raise for shapes that do not match their specs."""

from __future__ import annotations

__all__ = ["ShapeError"]


class ShapeError(TypeError):
    """Shapes do not match a polymorphic spec: two dimensions that differ or
    cannot be shown equal (``n`` vs ``m``, ``n`` vs ``2*n``), or an output tree
    that does not match ``out_shape``.  A ``TypeError``, as a mismatch of
    abstract types is one."""
