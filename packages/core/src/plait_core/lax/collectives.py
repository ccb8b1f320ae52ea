"""Named-axis collectives: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index``, ``ppermute``, ``psum_scatter`` and
``all_to_all``, with JAX's names and signatures; ``axis_size``,
``pbroadcast``, ``pshuffle`` and ``pswapaxes`` are composed of them (no
primitive of their own, so every interpreter that maps a named axis runs them).

``axis_name`` is an axis name bound by an enclosing ``vmap(...,
axis_name=...)`` (or by ``make_jaxpr(..., axis_env=...)``), or a tuple of
such names to act over several axes at once.  An unbound name raises
:class:`~plait_core.errors.UnboundAxisNameError`, a ``NameError``.  The
reductions and ``all_gather`` apply to every leaf of a pytree.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from plait_core import dtypes
from plait_core.abstract import get_aval
from plait_core.dims import Dim
from plait_core.lax.elementwise import convert_element_type
from plait_core.lax.structural import index_in_dim
from plait_core.primitive import Primitive
from plait_core.primitives import collectives as _c
from plait_core.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    axis_names,
    pmax_p,
    pmean_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from plait_core.primitives.collectives import axis_size as _bound_size
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pmax", "pmean", "pmin", "ppermute",
    "pcast", "pshuffle", "psum", "psum_scatter", "pswapaxes", "pvary",
]


def _no_groups(what: str, axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(
            f"{what}: axis_index_groups is not supported: groups of devices belong to pmap, and "
            "plait maps named axes with vmap, where every element is in the one group"
        )


def _names(what: str, axis_name: Any) -> tuple[Hashable, ...]:
    names = axis_names(axis_name)
    if not names:
        raise ValueError(f"{what}: axis_name must name at least one axis, got {axis_name!r}")
    return names


def _map_leaves(what: str, x: Any, fn: Any) -> Any:
    leaves, tree = tree_flatten(x)
    out = []
    for i, leaf in enumerate(leaves):
        get_aval(leaf, f"{what} argument leaf {i}")
        out.append(fn(leaf))
    return tree_unflatten(tree, out)


def _reduce(prim: Primitive, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    _no_groups(prim.name, axis_index_groups)
    axes = _names(prim.name, axis_name)
    return _map_leaves(prim.name, x, lambda leaf: prim.bind(leaf, axes=axes))


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over the named axis (or axes), for every leaf of the
    pytree ``x``.  Boolean leaves are summed as int32."""

    def one(leaf: Any) -> Any:
        if dtypes.is_bool(get_aval(leaf).dtype):
            leaf = convert_element_type(leaf, dtypes.int32)
        return leaf

    _no_groups("psum", axis_index_groups)
    return _reduce(psum_p, _map_leaves("psum", x, one), axis_name, None)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the named axis (or axes), for every leaf.
    Integer leaves give floating-point means."""
    return _reduce(pmean_p, x, axis_name, axis_index_groups)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of ``x`` over the named axis (or axes), for every leaf."""
    return _reduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of ``x`` over the named axis (or axes), for every leaf."""
    return _reduce(pmin_p, x, axis_name, axis_index_groups)


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0, tiled: bool = False) -> Any:
    """Every position's ``x`` along the named axis, gathered into each.

    Without ``tiled`` the values are stacked along a new axis at position
    ``axis`` (of size the axis size); with ``tiled`` they are concatenated
    along the existing axis ``axis``.  Negative ``axis`` counts from the end."""
    _no_groups("all_gather", axis_index_groups)
    names = _names("all_gather", axis_name)
    name_param: Any = names if isinstance(axis_name, (tuple, list)) else names[0]
    if type(axis) is not int:
        raise TypeError(f"all_gather: axis must be an int, got {axis!r}")
    if type(tiled) is not bool:
        raise TypeError(f"all_gather: tiled must be a bool, got {tiled!r}")

    def one(leaf: Any) -> Any:
        ndim = get_aval(leaf).ndim
        limit = ndim if tiled else ndim + 1
        if not -limit <= axis < limit:
            raise ValueError(
                f"all_gather: axis {axis} is out of range for an operand of type "
                f"{get_aval(leaf).str_short()} (tiled={tiled}: -{limit} <= axis < {limit})"
            )
        return all_gather_p.bind(leaf, axis_name=name_param, axis=axis % limit, tiled=tiled)

    return _map_leaves("all_gather", x, one)


def axis_index(axis_name: Any) -> Any:
    """This position's index along the named axis, an int32 scalar (for a
    tuple of names, the index in the row-major flattening of those axes)."""
    names = _names("axis_index", axis_name)
    return axis_index_p.bind(axis_name=names if isinstance(axis_name, (tuple, list)) else names[0])


def _name_param(what: str, axis_name: Any) -> Any:
    names = _names(what, axis_name)
    return names if isinstance(axis_name, (tuple, list)) else names[0]


def _axis(what: str, leaf: Any, value: Any, param: str) -> int:
    ndim = get_aval(leaf).ndim
    if type(value) is not int or not -ndim <= value < ndim:
        raise ValueError(f"{what}: {param} {value!r} is out of range for an operand of type {get_aval(leaf).str_short()}")
    return value % ndim


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Send each position's ``x`` along the named axis as ``perm`` says: a
    sequence of ``(source, destination)`` index pairs, each source and each
    destination at most once.  A position no pair sends to gets zeros."""
    pairs = tuple((int(a), int(b)) for a, b in perm)
    name = _name_param("ppermute", axis_name)
    return _map_leaves("ppermute", x, lambda leaf: ppermute_p.bind(leaf, axis_name=name, perm=pairs))


def psum_scatter(
    x: Any, axis_name: Any, *, scatter_dimension: int = 0, axis_index_groups: Any = None, tiled: bool = False
) -> Any:
    """The sum of ``x`` over the named axis, scattered: position ``i`` keeps
    block ``i`` of the sum along ``scatter_dimension``.  Without ``tiled``
    that dimension must have the axis size and is removed; with ``tiled`` it
    must be divisible by it and shrinks by that factor."""
    _no_groups("psum_scatter", axis_index_groups)
    name = _name_param("psum_scatter", axis_name)
    return _map_leaves(
        "psum_scatter",
        x,
        lambda leaf: psum_scatter_p.bind(
            leaf, axis_name=name, scatter_dimension=_axis("psum_scatter", leaf, scatter_dimension, "scatter_dimension"),
            tiled=bool(tiled),
        ),
    )


def all_to_all(
    x: Any, axis_name: Any, split_axis: int, concat_axis: int, *, axis_index_groups: Any = None, tiled: bool = False
) -> Any:
    """Split ``x`` along ``split_axis`` into one block per position of the named
    axis, send block ``i`` to position ``i``, and concatenate the received
    blocks (in position order) along ``concat_axis``.  Without ``tiled`` the
    split axis must have the axis size and is removed, and the received
    blocks are stacked along a new axis at ``concat_axis``."""
    _no_groups("all_to_all", axis_index_groups)
    name = _name_param("all_to_all", axis_name)

    def one(leaf: Any) -> Any:
        split = _axis("all_to_all", leaf, split_axis, "split_axis")
        concat = _axis("all_to_all", leaf, concat_axis, "concat_axis")
        return all_to_all_p.bind(leaf, axis_name=name, split_axis=split, concat_axis=concat, tiled=bool(tiled))

    return _map_leaves("all_to_all", x, one)


def axis_size(axis_name: Any) -> Dim:
    """The size of the named axis bound by an enclosing ``vmap(...,
    axis_name=)``, ``shard_map`` or ``pmap`` (for a tuple of names, the product
    of their sizes), as a Python int known while tracing.  An unbound name
    raises :class:`~plait_core.errors.UnboundAxisNameError` (a ``NameError``)."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_size: axis_name must be a name or a tuple of names, got the set {axis_name!r}")
    return _bound_size(_names("axis_size", axis_name), "axis_size")


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every position of the named axis gets position ``source``'s ``x`` (for
    every leaf of the pytree ``x``): the value of ``psum`` of ``x`` masked to
    position ``source``, computed by gathering (exact for every dtype, ``-0.0``,
    infinities and NaNs of other positions included)."""
    name = _name_param("pbroadcast", axis_name)
    size = _bound_size(_names("pbroadcast", axis_name), "pbroadcast")
    if type(source) is not int or (isinstance(size, int) and not 0 <= source < size):
        raise ValueError(f"pbroadcast: source must be an int in [0, {size}) (the axis size), got {source!r}")

    def one(leaf: Any) -> Any:
        gathered = all_gather_p.bind(leaf, axis_name=name, axis=0, tiled=False)
        return index_in_dim(gathered, source, axis=0, keepdims=False)

    return _map_leaves("pbroadcast", x, one)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """``ppermute`` with the permutation given by sources: position ``i`` gets
    position ``perm[i]``'s ``x``.  ``perm`` must hold each of ``0 ..
    len(perm) - 1`` once (``ValueError``); positions past ``len(perm)`` get zeros."""
    sources = [int(i) for i in perm]
    if sorted(sources) != list(range(len(sources))):
        raise ValueError(f"pshuffle: perm must be a permutation of 0..{len(sources) - 1}, got {list(perm)!r}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(sources)])


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with the array axis ``axis`` (whose size must be the
    axis size): ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pvary(x: Any, axis_name: Any) -> Any:
    """``x`` (every leaf of a pytree) cast to varying over the named mesh axes,
    inside a ``shard_map`` body: the same values, typed as differing from device
    to device (``typeof(y).vma`` gains the axes).  Its transpose is ``psum``.
    plait inserts it where an invariant value meets a varying one, so calling it
    is rarely needed.  (JAX 0.10 spells it ``pcast(x, axis_name, to='varying')``.)"""
    axes = _names("pvary", axis_name)
    return _map_leaves("pvary", x, lambda leaf: _c.pvary_p.bind(leaf, axes=axes))


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Change how ``x`` is typed over the named mesh axes: ``to='varying'`` is
    :func:`pvary`.  The other targets of JAX (``'reduced'``, ``'unreduced'``,
    ``'invariant'``) belong to its explicit-sharding types, which plait does not
    have: ``NotImplementedError``."""
    if to != "varying":
        raise NotImplementedError(
            f"pcast(to={to!r}): only to='varying' is supported; the reduced/unreduced types of JAX's explicit "
            "sharding are not part of plait"
        )
    return pvary(x, axis_name)
