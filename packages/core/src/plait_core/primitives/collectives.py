"""Primitives of the collectives family: operations across a named axis.

``psum pmax pmin pmean`` reduce one operand over the axes named in their
``axes`` param (a tuple of axis names); ``all_gather`` (params ``axis_name``,
``axis``, ``tiled``) stacks or concatenates the operand's values along the
named axis; ``axis_index`` (param ``axis_name``) is this position's index
along it.  ``ppermute`` (params ``axis_name``, ``perm``: ``(source,
destination)`` pairs) sends each position's value to another (positions no
pair reaches get zeros); ``psum_scatter`` (``axis_name``,
``scatter_dimension``, ``tiled``) sums over the axis and keeps this
position's block of the sum; ``all_to_all`` (``axis_name``, ``split_axis``,
``concat_axis``, ``tiled``) splits the operand into one block per position,
sends block ``i`` to position ``i`` and concatenates what it receives.  ``axis_name`` is one axis name or a tuple of names (see
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
from plait_core.vma import active as _active_vma
from plait_core.vma import register_pvary, vma_rules

__all__ = [
    "all_gather_p",
    "all_to_all_p",
    "axis_index_p",
    "axis_names",
    "axis_size",
    "pmax_p",
    "pmean_p",
    "pmin_p",
    "ppermute_p",
    "psum_p",
    "psum_scatter_p",
    "pvary_p",
]

psum_p = Primitive("psum", family="collective")
pmax_p = Primitive("pmax", family="collective")
pmin_p = Primitive("pmin", family="collective")
pmean_p = Primitive("pmean", family="collective")
all_gather_p = Primitive("all_gather", family="collective")
axis_index_p = Primitive("axis_index", family="collective")
ppermute_p = Primitive("ppermute", family="collective")
psum_scatter_p = Primitive("psum_scatter", family="collective")
all_to_all_p = Primitive("all_to_all", family="collective")
pvary_p = Primitive("pvary", family="collective")


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


def _ppermute_abstract_eval(x: ShapedArray, *, axis_name: Any, perm: Any) -> ShapedArray:
    size = axis_size(axis_names(axis_name), "ppermute")
    if not isinstance(perm, tuple) or not all(
        isinstance(p, tuple) and len(p) == 2 and all(type(i) is int for i in p) for p in perm
    ):
        raise TypeError(f"ppermute: perm must be a tuple of (source, destination) int pairs, got {perm!r}")
    for k, what in ((0, "source"), (1, "destination")):
        ends = [p[k] for p in perm]
        if len(set(ends)) != len(ends):
            raise ValueError(f"ppermute: perm {perm} sends to or from one position twice (repeated {what})")
        if type(size) is int and any(not 0 <= i < size for i in ends):
            raise ValueError(f"ppermute: perm {perm} names a {what} outside the axis of size {size}")
    return x


def _ppermute_impl(x: np.ndarray, *, axis_name: Any, perm: Any) -> np.ndarray:
    raise _eager_error("ppermute", axis_names(axis_name))


ppermute_p.def_abstract_eval(_ppermute_abstract_eval)
ppermute_p.def_impl(_ppermute_impl)


def _check_dim(prim: str, x: ShapedArray, dim: Any, what: str) -> int:
    if type(dim) is not int or not 0 <= dim < x.ndim:
        raise ValueError(f"{prim}: {what} {dim!r} is out of range for an operand of type {x.str_short()}")
    return dim


def _blocks(prim: str, x: ShapedArray, dim: int, size: Dim, tiled: bool) -> Dim:
    """The size of one position's block along ``dim`` (``ValueError`` if it does not split)."""
    n = x.shape[dim]
    if not tiled:
        if n != size:
            raise ValueError(
                f"{prim}: dimension {dim} of {x.str_short()} must have the axis size {size} (tiled=False)"
            )
        return 1
    if type(n) is int and type(size) is int and n % size:
        raise ValueError(f"{prim}: dimension {dim} of {x.str_short()} is not divisible by the axis size {size}")
    return n // size


def _psum_scatter_abstract_eval(x: ShapedArray, *, axis_name: Any, scatter_dimension: Any, tiled: Any) -> ShapedArray:
    size = axis_size(axis_names(axis_name), "psum_scatter")
    _numeric("psum_scatter")(x)
    d = _check_dim("psum_scatter", x, scatter_dimension, "scatter_dimension")
    block = _blocks("psum_scatter", x, d, size, bool(tiled))
    shape = x.shape[:d] + ((block,) if tiled else ()) + x.shape[d + 1 :]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _psum_scatter_impl(x: np.ndarray, **params: Any) -> np.ndarray:
    raise _eager_error("psum_scatter", axis_names(params["axis_name"]))


psum_scatter_p.def_abstract_eval(_psum_scatter_abstract_eval)
psum_scatter_p.def_impl(_psum_scatter_impl)


def _all_to_all_abstract_eval(
    x: ShapedArray, *, axis_name: Any, split_axis: Any, concat_axis: Any, tiled: Any
) -> ShapedArray:
    size = axis_size(axis_names(axis_name), "all_to_all")
    split = _check_dim("all_to_all", x, split_axis, "split_axis")
    concat = _check_dim("all_to_all", x, concat_axis, "concat_axis")
    block = _blocks("all_to_all", x, split, size, bool(tiled))
    if not tiled:
        rest = list(x.shape[:split] + x.shape[split + 1 :])
        rest.insert(concat, size)
        return ShapedArray(tuple(rest), x.dtype, x.weak_type)
    shape = list(x.shape)
    shape[split] = block
    shape[concat] = shape[concat] * size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_impl(x: np.ndarray, **params: Any) -> np.ndarray:
    raise _eager_error("all_to_all", axis_names(params["axis_name"]))


all_to_all_p.def_abstract_eval(_all_to_all_abstract_eval)
all_to_all_p.def_impl(_all_to_all_impl)


# ---------------------------------------------------------------------------
# pvary and the varying-axes rules (plait_core.vma): inside a shard_map body
# with check_vma, which mesh axes each result varies over.


def _pvary_abstract_eval(x: ShapedArray, *, axes: Any) -> ShapedArray:
    names = axis_names(axes)
    return x.update(vma=x.vma | frozenset(names)) if _active_vma else x


pvary_p.def_abstract_eval(_pvary_abstract_eval)
pvary_p.def_impl(lambda x, *, axes: x)
register_pvary(pvary_p)


def _mesh_axes(names: Any) -> frozenset[Any]:
    """The named axes that are manual axes of the shard_map being traced."""
    return frozenset(axis_names(names)) & _active_vma[-1] if _active_vma else frozenset()


def _reducing(x: ShapedArray, *, axes: Any) -> tuple[list[frozenset[Any]], list[frozenset[Any]]]:
    # psum over an axis the operand does not vary over sums equal copies (n * x), as
    # JAX's; the result is invariant over the axes either way.
    return [frozenset()], [x.vma - frozenset(axis_names(axes))]


def _varying(x: ShapedArray, *, axis_name: Any, **params: Any) -> tuple[list[frozenset[Any]], list[frozenset[Any]]]:
    # These exchange pieces between devices: the operand is cast to varying first
    # (so that its transpose sums over the devices), and so is the result.
    axes = _mesh_axes(axis_name)
    return [axes - x.vma], [x.vma | axes]


for _p in (psum_p, pmax_p, pmin_p, pmean_p):
    vma_rules[_p] = _reducing
for _p in (all_gather_p, ppermute_p, psum_scatter_p, all_to_all_p):
    vma_rules[_p] = _varying
vma_rules[axis_index_p] = lambda *, axis_name: ([], [_mesh_axes(axis_name)])
vma_rules[pvary_p] = lambda x, *, axes: ([frozenset()], [x.vma | frozenset(axis_names(axes))])
