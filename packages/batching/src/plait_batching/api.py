"""``vmap``: vectorise a function over a leading (or any) axis of its arguments.

The mapped function runs once, under a :class:`~plait_batching.trace.BatchTrace`;
every primitive it binds is rewritten by its batching rule to work on the
whole batch at once.  ``in_axes``/``out_axes`` say where the batch sits in
each argument and result; see :func:`vmap`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from plait_core import Tracer, extend_axis_env, get_aval, transformation
from plait_core.dims import Dim, SymbolicDim, definitely_equal
from plait_core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_unflatten,
)

from plait_batching.moves import matchaxis
from plait_batching.trace import AxisData, BatchTrace, BatchTracer

__all__ = ["vmap"]

AxisSpec = Any  # int | None | a pytree of those


# ---------------------------------------------------------------------------
# Checking in_axes / out_axes when vmap is called


def _is_axis(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_spec(what: str, spec: AxisSpec) -> AxisSpec:
    bad = [leaf for leaf in tree_leaves(spec) if not _is_axis(leaf)]
    if bad:
        raise TypeError(
            f"vmap {what} must be an int, None, or a (nested) tuple, list or dict of those, "
            f"but got {what}={spec!r}, which has the entry {bad[0]!r} of type {type(bad[0]).__name__}"
        )
    return spec


def _check_in_axes(in_axes: AxisSpec) -> AxisSpec:
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or _is_axis(in_axes) or type(in_axes) is tuple):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple with one entry per positional argument "
            f"of the function, but got in_axes={in_axes!r} of type {type(in_axes).__name__}"
        )
    return _check_spec("in_axes", in_axes)


# ---------------------------------------------------------------------------
# Naming arguments in messages


def _arg_names(fun: Callable[..., Any], nargs: int) -> list[str]:
    """A name for each positional argument: the parameter's name when the
    signature says it, else ``args[i]``."""
    names = [f"args[{i}]" for i in range(nargs)]
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return names
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, p in enumerate(positional[:nargs]):
        names[i] = p.name
    return names


class _Leaf:
    """One flattened input: its value, where it is in the arguments, its axis."""

    __slots__ = ("axis", "value", "where")

    def __init__(self, value: Any, where: str, axis: int | None) -> None:
        self.value = value
        self.where = where
        self.axis = axis


def _subtree_leaves(value: Any, where: str, axis: int | None, out: list[_Leaf]) -> None:
    for path, leaf in tree_flatten_with_path(value)[0]:
        out.append(_Leaf(leaf, where + keystr(path), axis))


def _match_prefix(spec: AxisSpec, value: Any, where: str, what: str, out: list[_Leaf]) -> None:
    """Give every leaf of ``value`` its axis from ``spec``, a tree prefix of it."""
    if spec is None or _is_axis(spec):
        _subtree_leaves(value, where, None if spec is None else int(spec), out)
        return
    spec_leaves, spec_tree = tree_flatten(spec, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_tree.flatten_up_to(value)
    except ValueError as e:
        detail = str(e).removeprefix("flatten_up_to: ").split("\n")[0]
        value_tree = tree_flatten(value)[1]
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value: got "
            f"{what}={spec!r} for {where}, of structure {value_tree}; {detail}"
        ) from None
    spec_paths = [keystr(p) for p, _ in tree_flatten_with_path(spec, is_leaf=lambda x: x is None)[0]]
    for ax, sub, p in zip(spec_leaves, subtrees, spec_paths):
        _subtree_leaves(sub, where + p, None if ax is None else int(ax), out)


def _flatten_inputs(
    fun: Callable[..., Any], in_axes: AxisSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[_Leaf], PyTreeDef]:
    names = _arg_names(fun, len(args))
    leaves: list[_Leaf] = []
    if type(in_axes) is tuple:
        if len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple with one entry per positional argument, "
                f"but got a tuple of length {len(in_axes)} (in_axes={in_axes!r}) for {len(args)} "
                "positional arguments"
            )
        for spec, a, n in zip(in_axes, args, names):
            _match_prefix(spec, a, f"argument {n}", "in_axes", leaves)
    else:
        for a, n in zip(args, names):
            _match_prefix(in_axes, a, f"argument {n}", "in_axes", leaves)
    for k in sorted(kwargs):  # keyword arguments are always mapped over their axis 0
        _match_prefix(0, kwargs[k], f"keyword argument {k}", "in_axes", leaves)
    tree = tree_flatten((args, kwargs))[1]
    return leaves, tree


# ---------------------------------------------------------------------------
# The size of the mapped axis


def _normalize_in_axis(leaf: _Leaf) -> tuple[int, Dim]:
    """The mapped leaf's axis (non-negative) and its size along it."""
    ax = leaf.axis
    assert ax is not None
    try:
        aval = get_aval(leaf.value)
    except TypeError:
        raise TypeError(
            f"vmap: {leaf.where} is mapped over axis {ax} (in_axes) but it is a value of type "
            f"{type(leaf.value).__name__}, not an array; give it in_axes=None to pass it unmapped"
        ) from None
    n = aval.ndim
    if not -n <= ax < n:
        head = f"vmap was asked to map {leaf.where} of type {aval.str_short()} over axis {ax} (in_axes), but"
        if n == 0:
            raise ValueError(f"{head} it is a scalar (rank 0), which has no axis to map; give it in_axes=None")
        raise ValueError(f"{head} it has rank {n}: the axis must be in [-{n}, {n})")
    ax = ax % n
    return ax, aval.shape[ax]


def _describe(leaf: _Leaf, ax: int, size: Dim) -> str:
    return f"  * {leaf.where} of type {get_aval(leaf.value).str_short()} has size {size} along its mapped axis {ax}"


def _axis_size(leaves: list[_Leaf], axis_size: Dim | None) -> tuple[list[int | None], Dim]:
    axes: list[int | None] = []
    mapped: list[tuple[_Leaf, int, Dim]] = []
    for leaf in leaves:
        if leaf.axis is None:
            axes.append(None)
            continue
        ax, size = _normalize_in_axis(leaf)
        axes.append(ax)
        mapped.append((leaf, ax, size))
    if not mapped:
        if axis_size is None:
            raise ValueError(
                "vmap must have at least one mapped argument (every in_axes entry is None, or there are no "
                "array arguments) unless axis_size is given; pass axis_size=n to map over n elements"
            )
        return axes, axis_size
    size = axis_size if axis_size is not None else mapped[0][2]
    if not all(definitely_equal(s, size) for _, _, s in mapped):
        listed = "\n".join(_describe(leaf, ax, s) for leaf, ax, s in mapped)
        given = f" axis_size={axis_size} was given, and" if axis_size is not None else ""
        raise ValueError(
            f"vmap got inconsistent sizes for the mapped axes:{given} the mapped arguments must all have "
            f"the same size along their mapped axes, but\n{listed}"
        )
    return axes, size


# ---------------------------------------------------------------------------
# Outputs


def _flatten_out_axes(out_axes: AxisSpec, out: Any, out_tree: PyTreeDef) -> list[int | None]:
    if out_axes is None or _is_axis(out_axes):
        ax = None if out_axes is None else int(out_axes)
        return [ax] * out_tree.num_leaves
    leaves: list[_Leaf] = []
    _match_prefix(out_axes, out, "the output", "out_axes", leaves)
    return [leaf.axis for leaf in leaves]


def _finish_output(trace: BatchTrace, leaf: Any, where: str, ax: int | None, size: Dim) -> Any:
    """The batched output as an array with its batch at ``ax``."""
    val, bdim = trace.unpack(leaf)
    if bdim is None and not isinstance(val, Tracer):
        try:
            get_aval(val)
        except TypeError:
            raise TypeError(
                f"vmap: {where} of the function's result is a value of type {type(val).__name__}, "
                "which is not an array; a vmapped function must return arrays (in any pytree)"
            ) from None
    if ax is None:
        if bdim is not None:
            raise ValueError(
                f"vmap: {where} of the function's result depends on the mapped axis (it is batched), but "
                "out_axes is None for it; only values that are the same for every element can be "
                "returned unmapped. Give it an integer out_axes"
            )
        return val
    rank = get_aval(val).ndim + (0 if bdim is not None else 1)
    if not -rank <= ax < rank:
        elem = rank - 1
        raise ValueError(
            f"vmap: out_axes {ax} is out of range for {where} of the function's result, whose elements have "
            f"rank {elem}: out_axes must be in [-{rank}, {rank})"
        )
    return matchaxis(val, bdim, ax % rank, size)


def _out_paths(out: Any) -> list[str]:
    return ["output leaf " + (keystr(p) or "(the whole output)") for p, _ in tree_flatten_with_path(out)[0]]


# ---------------------------------------------------------------------------
# vmap


def _check_axis_size(axis_size: Any) -> Dim | None:
    if axis_size is None or isinstance(axis_size, SymbolicDim):
        return axis_size
    if not _is_axis(axis_size) or int(axis_size) < 0:
        raise TypeError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    return int(axis_size)


def _check_axis_name(axis_name: Any) -> Hashable | None:
    try:
        hash(axis_name)
    except TypeError:
        raise TypeError(f"vmap: axis_name must be hashable, got {axis_name!r} of type {type(axis_name).__name__}") from None
    return axis_name  # type: ignore[no-any-return]


def vmap(
    fun: Callable[..., Any],
    in_axes: AxisSpec = 0,
    out_axes: AxisSpec = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Hashable | tuple[Hashable, ...] | None = None,
) -> Callable[..., Any]:
    """Vectorise ``fun`` over an axis of its arguments.

    The returned function takes the same arguments as ``fun`` with an extra
    *mapped* axis on some of them, and applies ``fun`` to every element along
    it at once, returning results with the mapped axis added.

    * ``in_axes``: where the mapped axis is in each argument: an int (every
      array argument, negative counts from the end), ``None`` (not mapped:
      passed as it is to every element), or a tuple with one entry per
      positional argument, each an int, ``None`` or a pytree prefix of that
      argument (dicts, tuples, lists) giving an axis per leaf.  Keyword
      arguments are always mapped over their axis 0.
    * ``out_axes``: where the mapped axis goes in each result (same forms, a
      prefix of the output tree).  ``None`` returns a result unmapped, which
      is allowed only if it does not depend on the mapped axis.  Results that
      do not depend on it are broadcast along an integer ``out_axes``.
    * ``axis_name``: names the mapped axis for collectives inside ``fun``
      (``lax.psum(x, axis_name)``, ``lax.axis_index(axis_name)``, ...).
    * ``axis_size``: the number of elements, needed when no argument is
      mapped; when given it must agree with the mapped arguments.
    * ``spmd_axis_name``: accepted for compatibility; it only matters with a
      device mesh, which plait does not have.

    Errors: ``ValueError`` for mapped axes of different sizes (naming every
    mapped argument, its type and axis), an axis out of range, an ``in_axes``
    that is not a prefix of the arguments, or a mapped result with
    ``out_axes=None``; ``TypeError`` for a mapped argument that is not an
    array and for malformed ``in_axes``/``out_axes``.
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, got {fun!r} of type {type(fun).__name__}")
    in_axes = _check_in_axes(in_axes)
    if isinstance(out_axes, list):
        out_axes = tuple(out_axes)
    out_axes = _check_spec("out_axes", out_axes)
    size_given = _check_axis_size(axis_size)
    name = _check_axis_name(axis_name)

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = _flatten_inputs(fun, in_axes, args, kwargs)
        axes, size = _axis_size(leaves, size_given)
        trace = BatchTrace(AxisData(name, size, spmd_axis_name))
        frames = [] if name is None else [(name, size)]
        with extend_axis_env(frames):
            with transformation(trace):
                flat = [leaf.value if ax is None else BatchTracer(trace, leaf.value, ax) for leaf, ax in zip(leaves, axes)]
                in_args, in_kwargs = tree_unflatten(in_tree, flat)
                out = fun(*in_args, **in_kwargs)
                out_leaves, out_tree = tree_flatten(out)
                out_ax = _flatten_out_axes(out_axes, out, out_tree)
            paths = _out_paths(out) if out_leaves else []
            results = [_finish_output(trace, x, p, ax, size) for x, p, ax in zip(out_leaves, paths, out_ax)]
        return tree_unflatten(out_tree, results)

    return vmapped


def vmap_flat(
    fun: Callable[..., Sequence[Any]],
    axis: AxisData,
    in_dims: Sequence[int | None],
    out_dims: Sequence[int | None],
) -> Callable[..., list[Any]]:
    """A flat version of :func:`vmap` for rules: ``fun`` takes and returns
    flat lists; ``in_dims``/``out_dims`` are non-negative or ``None``
    (an output with ``out_dims`` ``None`` must not be batched)."""

    def mapped(*args: Any) -> list[Any]:
        trace = BatchTrace(axis)
        frames = [] if axis.name is None else [(axis.name, axis.size)]
        with extend_axis_env(frames):
            with transformation(trace):
                ins = [x if d is None else BatchTracer(trace, x, d) for x, d in zip(args, in_dims)]
                outs = [trace.unpack(o) for o in fun(*ins)]
            res = []
            for k, ((val, d), ax) in enumerate(zip(outs, out_dims)):
                if ax is None:
                    if d is not None:
                        raise ValueError(f"vmap_flat: output {k} is batched but its out_dims entry is None")
                    res.append(val)
                else:
                    res.append(matchaxis(val, d, ax, axis.size))
        return res

    return mapped
