"""``plait.experimental.layout``: in-memory layouts of arrays (JAX's
``jax.experimental.layout``).

A :class:`Layout` names the order of an array's axes in memory
(``major_to_minor``: the slowest-varying axis first) and optionally a tiling;
a :class:`Format` pairs a layout with a sharding, as JAX's ``jit`` and
``device_put`` take them.

plait lays out every array row-major (``major_to_minor == (0, 1, ...,
ndim - 1)``) and does not pass layouts to XLA: a layout never changes a
value, only where its elements sit in memory, so :func:`with_layout_constraint`
checks the layout against the value's rank and returns the value unchanged
(a performance difference from JAX, never a difference in results).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

from plait_core.tree_util import tree_map

__all__ = ["Format", "Layout", "with_layout_constraint"]


class _AutoLayout:
    """``Layout.AUTO``: let the compiler choose the layout."""

    def __repr__(self) -> str:
        return "AUTO"


@dataclasses.dataclass(frozen=True, init=False)
class Layout:
    """The memory order of an array's axes (``major_to_minor``), an optional
    ``tiling`` (tuples of tile sizes) and the bit width of sub-byte elements."""

    major_to_minor: tuple[int, ...]
    tiling: tuple[tuple[int, ...], ...] | None
    sub_byte_element_size_in_bits: int

    AUTO: ClassVar[_AutoLayout] = _AutoLayout()

    def __init__(self, major_to_minor: Sequence[int], tiling: Sequence[Sequence[int]] | None = None,
                 sub_byte_element_size_in_bits: int = 0) -> None:
        order = tuple(int(a) for a in major_to_minor)
        if sorted(order) != list(range(len(order))):
            raise ValueError(f"Layout: major_to_minor must be a permutation of the axes 0..{len(order) - 1}, "
                             f"got {order}")
        object.__setattr__(self, "major_to_minor", order)
        object.__setattr__(self, "tiling", None if tiling is None else tuple(tuple(int(t) for t in tile)
                                                                             for tile in tiling))
        object.__setattr__(self, "sub_byte_element_size_in_bits", int(sub_byte_element_size_in_bits))

    def update(self, **kwargs: Any) -> Layout:
        """A copy with the given fields replaced."""
        fields = {"major_to_minor": self.major_to_minor, "tiling": self.tiling,
                  "sub_byte_element_size_in_bits": self.sub_byte_element_size_in_bits, **kwargs}
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape: Sequence[Any]) -> None:
        """``ValueError`` unless the layout has one entry per axis of ``aval_shape``."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(f"Length of major_to_minor and the rank of the value should match. Got "
                             f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}")


@dataclasses.dataclass(frozen=True, init=False)
class Format:
    """A layout (``None``, ``Layout.AUTO`` or a :class:`Layout`) with a sharding.
    A concrete :class:`Layout` needs a concrete sharding, as in JAX."""

    layout: Layout | _AutoLayout | None
    sharding: Any

    def __init__(self, layout: Layout | _AutoLayout | None = None, sharding: Any = None) -> None:
        if not (layout is None or isinstance(layout, (Layout, _AutoLayout))):
            raise TypeError("Invalid value received for the layout argument. Expected values are `None`, "
                            f"`Layout.AUTO` or an instance of `Layout`. Got {layout!r} of type {type(layout)}")
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError("Sharding has to be concrete when layout is of type Layout. Please pass a "
                             "NamedSharding or SingleDeviceSharding to the sharding argument.")
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "sharding", sharding)


def with_layout_constraint(x: Any, layouts: Any) -> Any:
    """``x`` (a pytree), each leaf constrained to the matching :class:`Layout` of
    ``layouts`` (one layout, or a tree of them matching ``x``).  plait keeps
    every array row-major, so the layout is checked against the leaf's rank and
    the value returned unchanged (see the module's documentation)."""

    def constrain(layout: Any, leaf: Any) -> Any:
        if not isinstance(layout, Layout):
            raise TypeError(f"with_layout_constraint: expected a Layout, got {type(layout).__name__}")
        layout.check_compatible_aval(getattr(leaf, "shape", ()))
        return leaf

    if isinstance(layouts, Layout):
        return tree_map(lambda leaf: constrain(layouts, leaf), x)
    return tree_map(constrain, layouts, x, is_leaf=lambda v: isinstance(v, Layout))
