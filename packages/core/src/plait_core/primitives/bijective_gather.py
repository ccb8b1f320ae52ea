"""The ``bijective_gather`` primitive: a gather that is a bijection between the
*valid* positions of its result and the *valid* positions of its operand, and
whose transpose is therefore the inverse gather (not a ``scatter_add``).

Operands ``(operand, indices, valid, inverse_indices, inverse_valid)``:

* ``gather(operand, indices)`` with ``dimension_numbers`` and ``slice_sizes``
  (``CLIP`` mode) computes the result;
* ``valid`` (boolean, the batch shape of ``indices``, i.e. the result's
  dimensions that are not ``offset_dims``) marks the result positions that
  are valid;
* ``inverse_indices`` gather (``inverse_dimension_numbers``,
  ``inverse_slice_sizes``) from an array of the result's shape back to the
  operand's shape, and ``inverse_valid`` (their batch shape) marks the valid
  operand positions.

The caller promises (it is not checked) that each valid result position reads
a valid operand position, that each valid operand position is read by exactly
one valid result position, and that the inverse gather reads it back from
there.  Then the result's valid positions are a permutation of the operand's
valid positions, and the transpose of "gather, then zero the invalid
positions" is "inverse gather, then zero the invalid positions": a gather,
which XLA runs much faster than the ``scatter_add`` a plain gather's
transpose is.

With ``masked=True`` the result's invalid positions are zeros.  With
``masked=False`` they hold whatever the gather reads there (finite wherever
the operand is): unspecified values, which have no derivative — the JVP's
tangent and the transpose's cotangent are zero there (both are the
``masked=True`` primitive).  Piles use this to convert between their padded
and packed layouts: the valid positions are the elements' true rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core.abstract import ShapedArray
from plait_core.dims import Shape, definitely_equal
from plait_core.primitive import Primitive
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    _gather_abstract_eval,
    _gather_impl,
)

__all__ = ["bijective_gather_p", "gather_params", "inverse_params"]

bijective_gather_p = Primitive("bijective_gather", family="structural")


def gather_params(params: dict[str, Any]) -> dict[str, Any]:
    """The params of the plain ``gather`` the primitive with ``params`` computes."""
    return dict(
        dimension_numbers=params["dimension_numbers"], slice_sizes=params["slice_sizes"],
        indices_are_sorted=params["indices_are_sorted"], unique_indices=False, mode=GatherScatterMode.CLIP,
        fill_value=None,
    )  # fmt: skip


def inverse_params(params: dict[str, Any], masked: bool = True) -> dict[str, Any]:
    """The params of the inverse primitive (its forward and inverse gathers swapped)."""
    return dict(
        dimension_numbers=params["inverse_dimension_numbers"], slice_sizes=params["inverse_slice_sizes"],
        inverse_dimension_numbers=params["dimension_numbers"], inverse_slice_sizes=params["slice_sizes"],
        indices_are_sorted=params["indices_are_sorted"], masked=masked,
    )  # fmt: skip


def _same_shape(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(definitely_equal(x, y) for x, y in zip(a, b))


def _abstract_eval(
    operand: ShapedArray, indices: ShapedArray, valid: ShapedArray, inverse_indices: ShapedArray,
    inverse_valid: ShapedArray, **params: Any,
) -> ShapedArray:  # fmt: skip
    name = "bijective_gather"
    for key in ("dimension_numbers", "inverse_dimension_numbers"):
        if not isinstance(params[key], GatherDimensionNumbers):
            raise TypeError(f"{name}: {key} must be a GatherDimensionNumbers, got {params[key]!r}")
    if not isinstance(params["masked"], bool) or not isinstance(params["indices_are_sorted"], bool):
        raise TypeError(f"{name}: masked and indices_are_sorted must be bools, got {params['masked']!r} and "
                        f"{params['indices_are_sorted']!r}")
    out = _gather_abstract_eval(operand, indices, **gather_params(params))
    back = _gather_abstract_eval(out, inverse_indices, **gather_params(inverse_params(params)))
    if not _same_shape(back.shape, operand.shape):
        raise TypeError(f"{name}: the inverse gather makes {back.str_short()} from the result {out.str_short()}, "
                        f"not the operand's shape {operand.str_short()}")
    for label, mask, idx in (("valid", valid, indices), ("inverse_valid", inverse_valid, inverse_indices)):
        if mask.dtype != np.dtype(bool) or not _same_shape(mask.shape, idx.shape[:-1]):
            raise TypeError(f"{name}: {label} must be a boolean array of its indices' batch shape "
                            f"{tuple(idx.shape[:-1])}, got {mask.str_short()}")
    return out


def batch_dims_of(params: dict[str, Any], out_ndim: int) -> tuple[int, ...]:
    """The result's dimensions that are not window dimensions (``valid``'s, in order)."""
    offset = params["dimension_numbers"].offset_dims
    return tuple(d for d in range(out_ndim) if d not in offset)


def _impl(operand: Any, indices: Any, valid: Any, inverse_indices: Any, inverse_valid: Any, **params: Any) -> Any:
    out = _gather_impl(np.asarray(operand), np.asarray(indices), **gather_params(params))
    if not params["masked"]:
        return out
    keep = batch_dims_of(params, out.ndim)
    shape = [out.shape[d] if d in keep else 1 for d in range(out.ndim)]
    return np.where(np.asarray(valid).reshape(shape), out, np.zeros((), out.dtype))


bijective_gather_p.def_abstract_eval(_abstract_eval)
bijective_gather_p.def_impl(_impl)
