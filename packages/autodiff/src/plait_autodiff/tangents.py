"""Tangent types and symbolic zeros.

Every tangent (and cotangent) type comes from :func:`to_tangent_type`:
inexact primals have tangents of their own type, integer and boolean primals
have ``float0`` tangents (a dtype with no values: their derivative is always
zero).  A tangent known to be zero is represented by :class:`Zero`, made from
a primal value by :meth:`Zero.from_primal_value`; rules skip work for it and
only :func:`instantiate` turns it into an array when one is really needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes, get_aval
from plait_core.abstract import ShapedArray, to_tangent_type
from plait_core.dims import is_constant_dim
from plait_core.primitives.ad_helpers import add_any_p
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.primitives.structural import broadcast_in_dim_p

__all__ = ["Zero", "add_tangents", "instantiate", "is_float0", "to_tangent_type", "zeros_of"]


def is_float0(aval: ShapedArray) -> bool:
    """True for the tangent type of integer and boolean values."""
    return aval.dtype == dtypes.float0


class Zero:
    """A symbolic zero tangent or cotangent of type ``aval`` (already a tangent type)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @staticmethod
    def from_primal_value(x: Any) -> Zero:
        """The zero tangent of the primal value ``x``."""
        return Zero(to_tangent_type(get_aval(x)))

    @staticmethod
    def from_primal_aval(aval: ShapedArray) -> Zero:
        """The zero tangent of a primal of type ``aval``."""
        return Zero(to_tangent_type(aval))

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def zeros_of(aval: ShapedArray) -> Any:
    """An array of zeros of type ``aval`` on the current trace (a broadcast
    scalar, so staged programs do not carry large constants)."""
    if is_float0(aval) and all(is_constant_dim(d) for d in aval.shape):
        return np.zeros(tuple(int(d) for d in aval.shape), dtypes.float0)
    zero = np.zeros((), aval.dtype)
    if not aval.shape:
        return zero
    return broadcast_in_dim_p.bind(zero, shape=tuple(aval.shape), broadcast_dimensions=())


def instantiate(t: Any) -> Any:
    """``t`` as an array: a :class:`Zero` becomes :func:`zeros_of` its type."""
    return zeros_of(t.aval) if type(t) is Zero else t


def typed_as_primal(t: Any, primal: ShapedArray) -> Any:
    """The tangent (or cotangent) ``t`` as the transformations return it, typed as
    JAX types it: instantiated, and weakly typed exactly when its inexact
    primal is.  (Inside a transformation tangent types are strong, so that a
    loop carrying a tangent keeps its type; the weak type comes back here, at
    the boundary, so ``jvp`` of a weak output that does not depend on the
    inputs gives a weak zero tangent, as in JAX.)"""
    t = instantiate(t)
    aval = get_aval(t)
    if dtypes.is_inexact(aval.dtype) and aval.dtype == primal.dtype and aval.weak_type != primal.weak_type:
        return convert_element_type_p.bind(t, new_dtype=aval.dtype, weak_type=primal.weak_type)
    return t


def add_tangents(a: Any, b: Any) -> Any:
    """The sum of two tangents of one type, skipping symbolic zeros."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add_any_p.bind(a, b)
