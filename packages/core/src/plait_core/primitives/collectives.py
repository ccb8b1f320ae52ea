"""Primitives of the collectives family: operations across a named axis.

``psum pmax pmin pmean`` reduce one operand over the axes named in their
``axes`` param (a tuple of axis names); ``all_gather`` (params ``axis_name``,
``axis``, ``tiled``) stacks or concatenates the operand's values along the
named axis; ``axis_index`` (param ``axis_name``) is this position's index
along it.  ``axis_name`` is one axis name or a tuple of names (see
:func:`axis_names`).

A named axis exists only inside a transformation that binds it (``vmap(...,
axis_name=...)``) or while staging with ``make_jaxpr(..., axis_env=...)``.
Their abstract evaluation looks each name up with
:func:`plait_core.axes.axis_frame_size`, so an unbound name raises
:class:`~plait_core.errors.UnboundAxisNameError` (a ``NameError``).  Their
semantics come from the interpreter that maps the axis (batching); evaluated
eagerly there is no mapped axis, so their implementations raise that error.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.axes import axis_frame_size
from plait_core.dims import Dim
from plait_core.errors import UnboundAxisNameError
from plait_core.primitive import Primitive

__all__ = [
    "all_gather_p",
    "axis_index_p",
    "axis_names",
    "axis_size",
    "pmax_p",
    "pmean_p",
    "pmin_p",
    "psum_p",
]

psum_p = Primitive("psum", family="collective")
pmax_p = Primitive("pmax", family="collective")
pmin_p = Primitive("pmin", family="collective")
pmean_p = Primitive("pmean", family="collective")
all_gather_p = Primitive("all_gather", family="collective")
axis_index_p = Primitive("axis_index", family="collective")


def axis_names(axis_name: Any) -> tuple[Hashable, ...]:
    """The axis names of an ``axis_name`` argument or param: a tuple of names
    as given, or one name."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"an axis name must be hashable, got {n!r} of type {type(n).__name__}") from None
    return names


def axis_size(names: tuple[Hashable, ...], what: str) -> Dim:
    """The product of the sizes bound to ``names``; ``UnboundAxisNameError``
    naming ``what`` and the axis if one is not bound."""
    size: Dim = 1
    for n in names:
        size = size * axis_frame_size(n, what=what)
    return size


def _check_axes(prim: str, axes: Any) -> tuple[Hashable, ...]:
    if not isinstance(axes, tuple) or not axes:
        raise TypeError(f"{prim}: the param axes must be a non-empty tuple of axis names, got {axes!r}")
    axis_size(axes, prim)
    return axes


def _eager_error(prim: str, names: tuple[Hashable, ...]) -> UnboundAxisNameError:
    """Eagerly no axis is mapped: unbound names say so, bound ones too."""
    size = axis_size(names, prim)  # raises for an unbound name
    return UnboundAxisNameError(
        f"{prim} over the axis {names[0] if len(names) == 1 else names!r} (size {size}) cannot be "
        "evaluated eagerly: no transformation maps over that axis here; use the collective inside "
        "vmap(..., axis_name=...)"
    )


def _reduction_rule(prim: str, out_dtype: Callable[[ShapedArray], Any]) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: Any) -> ShapedArray:
        _check_axes(prim, axes)
        return ShapedArray(x.shape, out_dtype(x), x.weak_type)

    return rule


def _reduction_impl(prim: str) -> Callable[..., np.ndarray]:
    def impl(x: np.ndarray, *, axes: tuple[Hashable, ...]) -> np.ndarray:
        raise _eager_error(prim, axes)

    return impl


def _numeric(prim: str) -> Callable[[ShapedArray], Any]:
    def dtype(x: ShapedArray) -> Any:
        if dtypes.is_bool(x.dtype):
            raise TypeError(f"{prim}: boolean operands are not supported (got {x.str_short()}); convert to an integer dtype first")
        return x.dtype

    return dtype


def _pmean_dtype(x: ShapedArray) -> Any:
    if dtypes.is_inexact(x.dtype):
        return x.dtype
    if dtypes.is_bool(x.dtype):
        raise TypeError(f"pmean: boolean operands are not supported (got {x.str_short()})")
    return dtypes.default_float_dtype()


for _p, _dtype in (
    (psum_p, _numeric("psum")),
    (pmax_p, lambda x: x.dtype),
    (pmin_p, lambda x: x.dtype),
    (pmean_p, _pmean_dtype),
):
    _p.def_abstract_eval(_reduction_rule(_p.name, _dtype))
    _p.def_impl(_reduction_impl(_p.name))


def _all_gather_abstract_eval(x: ShapedArray, *, axis_name: Any, axis: Any, tiled: Any) -> ShapedArray:
    names = axis_names(axis_name)
    size = axis_size(names, "all_gather")
    if type(tiled) is not bool:
        raise TypeError(f"all_gather: the param tiled must be a bool, got {tiled!r}")
    if type(axis) is not int:
        raise TypeError(f"all_gather: the param axis must be an int, got {axis!r}")
    limit = x.ndim if tiled else x.ndim + 1
    if not 0 <= axis < limit:
        raise ValueError(
            f"all_gather: axis {axis} is out of range for an operand of type {x.str_short()} "
            f"(tiled={tiled}: 0 <= axis < {limit})"
        )
    if tiled:
        shape = x.shape[:axis] + (x.shape[axis] * size,) + x.shape[axis + 1 :]
    else:
        shape = x.shape[:axis] + (size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _all_gather_impl(x: np.ndarray, *, axis_name: Any, axis: int, tiled: bool) -> np.ndarray:
    raise _eager_error("all_gather", axis_names(axis_name))


all_gather_p.def_abstract_eval(_all_gather_abstract_eval)
all_gather_p.def_impl(_all_gather_impl)


def _axis_index_abstract_eval(*, axis_name: Any) -> ShapedArray:
    axis_size(axis_names(axis_name), "axis_index")
    return ShapedArray((), dtypes.int32, False)


def _axis_index_impl(*, axis_name: Any) -> np.ndarray:
    raise _eager_error("axis_index", axis_names(axis_name))


axis_index_p.def_abstract_eval(_axis_index_abstract_eval)
axis_index_p.def_impl(_axis_index_impl)
