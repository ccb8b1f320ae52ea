"""``vmap``: vectorise a function over an axis of its arguments.

The mapped function runs once, under a :class:`~plait_batching.trace.BatchTrace`;
every primitive it binds is rewritten by its batching rule to work on the
whole batch at once.  ``in_axes``/``out_axes`` (see :mod:`plait_batching.specs`)
say where the batch is in each argument and result.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from plait_batching.buckets import plan_buckets, run_buckets
from plait_batching.moves import matchaxis
from plait_batching.pile import Pile, PileAxis
from plait_batching.ragged import enter_pile, finish_pile, ragged_result_error
from plait_batching.specs import (
    AxisSpec,
    Spec,
    SpecLeaf,
    check_in_axes,
    check_spec,
    flatten_inputs,
    flatten_value,
    is_axis,
    match_groups,
)
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_batching.vmappable import is_vmappable_value, spec_of, vmappable_of
from plait_core import Tracer, extend_axis_env, get_aval, set_current_trace, transformation
from plait_core.dims import Dim, SymbolicDim, definitely_equal
from plait_core.tree_util import keystr, tree_flatten_with_path, tree_unflatten
from plait_core.wrapping import wraps

__all__ = ["vmap"]


# ---------------------------------------------------------------------------
# The size of the mapped axis


def _leaf_size(leaf: SpecLeaf) -> tuple[Spec, Dim, str]:
    """The mapped leaf's spec (a non-negative axis for arrays), its number of
    elements, and its type for messages."""
    spec, value, where = leaf.spec, leaf.value, leaf.where
    entry, special = vmappable_of(value), spec_of(spec)
    if special is not None and special is not entry:
        raise TypeError(
            f"vmap: the in_axes entry {spec!r} for {where} maps values of type {special.data_type.__name__}, "
            f"but {where} is a value of type {type(value).__name__}"
        )
    if type(value) is Pile and not isinstance(spec, PileAxis):
        raise TypeError(
            f"vmap: {where} is a Pile, which vmap maps with in_axes=pile_axis, but its in_axes entry is {spec!r}"
        )
    if entry is not None:
        return spec, entry.axis_size(value, spec), type(value).__name__
    try:
        aval = get_aval(value)
    except TypeError:
        raise TypeError(
            f"vmap: {where} is mapped over axis {spec} (in_axes) but it is a value of type "
            f"{type(value).__name__}, not an array; give it in_axes=None to pass it unmapped"
        ) from None
    n = aval.ndim
    if not -n <= spec < n:
        head = f"vmap was asked to map {where} of type {aval.str_short()} over axis {spec} (in_axes), but"
        if n == 0:
            raise ValueError(f"{head} it is a scalar (rank 0), which has no axis to map; give it in_axes=None")
        raise ValueError(f"{head} it has rank {n}: the axis must be in [-{n}, {n})")
    ax = spec % n
    return ax, aval.shape[ax], aval.str_short()


def _axis_size(leaves: list[SpecLeaf], axis_size: Dim | None) -> tuple[list[Spec], Dim]:
    """Each leaf's normalised spec, and the common size of the mapped axes."""
    specs: list[Spec] = []
    mapped: list[tuple[SpecLeaf, Spec, Dim, str]] = []
    for leaf in leaves:
        if leaf.spec is None:
            specs.append(None)
            continue
        spec, size, typ = _leaf_size(leaf)
        specs.append(spec)
        mapped.append((leaf, spec, size, typ))
    if not mapped:
        if axis_size is None:
            raise ValueError(
                "vmap must have at least one mapped argument (every in_axes entry is None, or there are no "
                "array arguments) unless axis_size is given; pass axis_size=n to map over n elements"
            )
        return specs, axis_size
    size = axis_size if axis_size is not None else mapped[0][2]
    if not all(definitely_equal(s, size) for _, _, s, _ in mapped):
        listed = "\n".join(
            f"  * {leaf.where} of type {typ} has size {s} along its mapped axis {spec}" for leaf, spec, s, typ in mapped
        )
        given = f" axis_size={axis_size} was given, and" if axis_size is not None else ""
        raise ValueError(
            f"vmap got inconsistent sizes for the mapped axes:{given} the mapped arguments must all have "
            f"the same size along their mapped axes, but\n{listed}"
        )
    return specs, size


# ---------------------------------------------------------------------------
# Entering: what the function sees for one element


def _enter(trace: BatchTrace, leaf: SpecLeaf, spec: Spec, size: Dim) -> Any:
    if spec is None:
        return leaf.value
    if type(leaf.value) is Pile:
        return enter_pile(trace, leaf.value)
    entry = vmappable_of(leaf.value)
    if entry is None:
        return BatchTracer(trace, leaf.value, spec)
    type_name = type(leaf.value).__name__

    def wrap(array: Any, axis: int) -> Any:
        aval = get_aval(array, f"an array wrapped by to_elt of {type_name}")
        n = aval.ndim
        if not (is_axis(axis) and -n <= axis < n) or not definitely_equal(aval.shape[int(axis) % n], size):
            raise ValueError(
                f"vmap: to_elt of {type_name} ({leaf.where}) wrapped an array of type {aval.str_short()} along axis "
                f"{axis}, which is not an axis of size {size} (the mapped axis size)"
            )
        return BatchTracer(trace, array, int(axis) % n)

    return entry.to_elt(leaf.value, spec, wrap)


# ---------------------------------------------------------------------------
# Leaving: results with the batch where out_axes says


def _finish_leaf(trace: BatchTrace, leaf: Any, where: str, ax: int | None, size: Dim) -> Any:
    """One result leaf as an array with its batch at ``ax`` (``None``: unmapped)."""
    err = ragged_result_error(trace, leaf, where, ax)
    if err is not None:
        raise err
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
        raise ValueError(
            f"vmap: out_axes {ax} is out of range for {where} of the function's result, whose elements have "
            f"rank {rank - 1}: out_axes must be in [-{rank}, {rank})"
        )
    return matchaxis(val, bdim, ax % rank, size)


def _finish_group(trace: BatchTrace, spec: Spec, sub: Any, where: str, size: Dim) -> Any:
    """The output subtree ``sub`` (at ``where``) as out_axes entry ``spec`` asks."""
    if isinstance(spec, PileAxis):
        with set_current_trace(trace.parent_trace):
            pairs, tree = tree_flatten_with_path(sub, is_leaf=is_vmappable_value)
            piles = [finish_pile(trace, x, _leaf_name(where, p)) for p, x in pairs]
            # Rebuilt under the parent trace: a node's unflatten that looks at the current
            # trace (flax.nnx's Variables do) must see the caller's, not this vmap's.
            return tree_unflatten(tree, piles)
    special = spec_of(spec)
    if special is not None:
        parent = trace.parent
        assert parent is not None

        def unwrap(x: Any, axis: int) -> Any:
            with set_current_trace(parent):
                return _finish_leaf(trace, x, where, axis, size)

        return special.from_elt(sub, spec, size, unwrap)
    with set_current_trace(trace.parent_trace):
        pairs = tree_flatten_with_path(sub, is_leaf=is_vmappable_value)[0]
        done = [_finish_leaf(trace, x, _leaf_name(where, p), spec, size) for p, x in pairs]
        return tree_unflatten(flatten_value(sub)[1], done)


def _leaf_name(where: str, path: Any) -> str:
    name = where + keystr(path)
    return name if name != _OUT else "the output"


_OUT = "output leaf "


def _finish(trace: BatchTrace, out_axes: AxisSpec, out: Any, size: Dim) -> Any:
    groups, spec_tree = match_groups(out_axes, out, _OUT, "out_axes")
    results = [_finish_group(trace, s, sub, w, size) for s, sub, w in groups]
    if spec_tree is None:
        return results[0]
    with set_current_trace(trace.parent_trace):
        return tree_unflatten(spec_tree, results)


# ---------------------------------------------------------------------------
# vmap


def _check_axis_size(axis_size: Any) -> Dim | None:
    if axis_size is None or isinstance(axis_size, SymbolicDim):
        return axis_size
    if not is_axis(axis_size) or int(axis_size) < 0:
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
      arguments are always mapped over their axis 0.  Values of vmappable
      types (:func:`~plait_batching.vmappable.register_vmappable`) are mapped
      as their type says, and their spec objects may appear as entries.
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

    Piles (ragged batches, :class:`~plait_batching.pile.Pile`): the entry
    ``pile_axis`` in ``in_axes`` maps over a pile's elements, whose size
    along the ragged axis is then symbolic (``x.shape[0]`` is a name such as
    ``_pile0``); the number of elements comes from the pile.  Two piles
    combine when their lengths are equal.  ``pile_axis`` in ``out_axes``
    returns a pile: ragged results keep their ragged axis, others make a
    pile of equal lengths along their axis 0.  A ragged result returned with
    another ``out_axes`` is a ``ValueError``, a pile mapped with another
    ``in_axes`` entry a ``TypeError``.  See :mod:`plait_batching.ragged` for
    what can be computed on ragged values.

    Errors: ``ValueError`` for mapped axes of different sizes (naming every
    mapped argument, its type and axis), an axis out of range, an ``in_axes``
    that is not a prefix of the arguments, or a mapped result with
    ``out_axes=None``; ``TypeError`` for a mapped argument that is not an
    array and for malformed ``in_axes``/``out_axes``.
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, got {fun!r} of type {type(fun).__name__}")
    in_axes = check_in_axes(in_axes)
    if isinstance(out_axes, list):
        out_axes = tuple(out_axes)
    out_axes = check_spec("out_axes", out_axes)
    size_given = _check_axis_size(axis_size)
    name = _check_axis_name(axis_name)

    def mapped(args: tuple[Any, ...], kwargs: dict[str, Any], given: Dim | None) -> Any:
        leaves, in_tree = flatten_inputs(fun, in_axes, args, kwargs)
        specs, size = _axis_size(leaves, given)
        plan = plan_buckets(leaves, specs, out_axes, name)

        def whole() -> Any:
            trace = BatchTrace(AxisData(name, size, spmd_axis_name))
            frames = [] if name is None else [(name, size)]
            with extend_axis_env(frames), transformation(trace):
                flat = [_enter(trace, leaf, spec, size) for leaf, spec in zip(leaves, specs)]
                in_args, in_kwargs = tree_unflatten(in_tree, flat)
                out = fun(*in_args, **in_kwargs)
                return _finish(trace, out_axes, out, size)

        if plan is not None:  # piles with static lengths: by buckets of similar lengths (axis_size checked above)
            return run_buckets(plan, leaves, specs, in_tree, out_axes, lambda a, k: mapped(a, k, None), whole)
        return whole()

    @wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        return mapped(args, kwargs, size_given)

    return vmapped
