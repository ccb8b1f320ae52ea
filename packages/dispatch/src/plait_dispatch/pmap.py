"""``pmap``: map a function over devices, built on ``jit`` and ``shard_map``.

``pmap(f, axis_name)(x)`` splits ``x`` along its mapped axis over that many
devices (one slice each), runs ``f`` on every slice at once (one SPMD
program, compiled once per signature) and stacks the results along
``out_axes``.  Inside ``f`` the axis name is bound: ``lax.psum(y,
axis_name)`` and the other collectives act across the devices, also together
with the names of ``vmap``\\ s inside (``psum(y, ('devices', 'batch'))``).

The mapped function is ``jit(shard_map(g, mesh, in_specs, out_specs))``
over a one-axis mesh of the devices, where ``g`` drops the mapped axis of
each slice (of size 1 per device), calls ``f`` and puts the axis back.
Results are Arrays laid out over the devices (``NamedSharding`` with the
axis name), usable as inputs of the next call without moving data.

In a run of several processes (``plait.distributed``) the mapping spans the
devices of every process, as JAX's: ``devices()`` (or ``devices=``) is the
device list of the one SPMD program, each process passes the rows of its
own devices and gets back its own rows, and collectives, ``axis_index``
(the global index) and ``ppermute`` act across all of them; see
:mod:`plait_dispatch.pmap_rows`.  Under a transformation (``jit``, ``grad``,
``vmap``, ...) a traced value holds only this process's rows, and there
``pmap`` maps over this process's devices alone (of ``devices=`` those of
this process), as JAX 0.10.2's does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import EvalTrace, current_trace, get_aval
from plait_core.lax import expand_dims, squeeze
from plait_core.primitives.calls import fun_name
from plait_core.shard_map import shard_map
from plait_core.sharding import Mesh, NamedSharding, PartitionSpec
from plait_core.tree_util import tree_flatten, tree_unflatten
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.jit import jit
from plait_dispatch.pmap_rows import is_cross_process, to_global, to_local

__all__ = ["pmap"]


class _Anonymous:
    """The axis name of a ``pmap`` without ``axis_name`` (no collective can name it)."""

    def __repr__(self) -> str:
        return "<pmap axis>"


def _ints(value: int | Sequence[int], what: str) -> tuple[int, ...]:
    seq = (value,) if isinstance(value, int) else tuple(value)
    for v in seq:
        if type(v) is not int:
            raise TypeError(f"pmap: {what} must be ints, got {v!r}")
    return seq


def _axes_per_leaf(spec: Any, tree: Any, what: str, where: str) -> list[int | None]:
    """One axis (or None) per leaf of ``tree`` from ``spec``, a pytree prefix of it."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(tree_flatten(tree)[0])
    spec_leaves, spec_tree = tree_flatten(spec, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"{where}: {what} {spec!r} is not a pytree prefix of the value: {str(e).splitlines()[0]}") from None
    out: list[int | None] = []
    for s, sub in zip(spec_leaves, subtrees):
        if s is not None and type(s) is not int:
            raise TypeError(f"{where}: {what} entries must be ints or None, got {s!r}")
        out.extend([s] * len(tree_flatten(sub)[0]))
    return out


def _spec_at(axis: int | None, name: Hashable) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), name)


def pmap(
    fun: Callable[..., Any] | None = None,
    axis_name: Hashable | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Sequence[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Sequence[int] = (),
    global_arg_shapes: Any = None,
) -> Any:
    """Map ``fun`` over devices (see the module docs).

    * ``in_axes``: per positional argument (a pytree prefix of the argument
      tuple), the axis mapped over devices, or ``None`` for an argument
      every device gets whole; keyword arguments are mapped over their axis
      0, as in JAX.  All mapped axes must have one size, the
      number of devices used; more than there are is a ``ValueError`` that
      says both numbers.
    * ``out_axes``: where the device axis goes in each output (prefix of the
      output); ``None`` returns a value every device computed identically
      (e.g. after ``psum``) once.
    * ``static_broadcasted_argnums``: arguments passed to ``fun`` as Python
      values (hashable; a new value compiles again).
    * ``devices``: the devices to use (then the mapped size must equal their
      number, or, when they span several processes, the number of this
      process's devices among them); default: this process's devices, the
      first ``size`` of them, or in a run of several processes every device
      of every process (then the mapped size must be
      ``local_device_count()``: each process passes its own rows, and gets
      its own rows of the results; under ``jit``/``grad``/``vmap`` only this
      process's devices, as JAX's).
    * ``donate_argnums``: arguments whose buffers (on every device) the
      computation may reuse; they are deleted by the call.

    * ``axis_size``: as in JAX 0.10.2, a check only: the mapped arguments give
      the size, and an ``axis_size`` that differs is a ``ValueError`` (a call
      with no mapped argument is one whatever ``axis_size`` says).

    ``global_arg_shapes`` is not supported: across processes each process
    passes its local rows.
    """
    if fun is None:
        return functools.partial(
            pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums, devices=devices, backend=backend,
            axis_size=axis_size, donate_argnums=donate_argnums, global_arg_shapes=global_arg_shapes,
        )
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {type(fun).__name__}: {fun!r}")
    if backend is not None and backend != _jaxlib.PLATFORM:
        raise ValueError(f"pmap: unknown backend {backend!r}; plait runs on {_jaxlib.PLATFORM!r}")
    if global_arg_shapes is not None:
        raise NotImplementedError(
            "pmap: global_arg_shapes is not supported: across processes each process passes its local rows"
        )
    statics = _ints(static_broadcasted_argnums, "static_broadcasted_argnums")
    donated = _ints(donate_argnums, "donate_argnums")
    if set(statics) & set(donated):
        raise ValueError(f"pmap: arguments {sorted(set(statics) & set(donated))} are both static and donated")
    name: Hashable = axis_name if axis_name is not None else _Anonymous()
    where = f"pmap of {fun_name(fun)}"
    chosen = None if devices is None else list(devices)
    compiled: dict[Any, Any] = {}
    with_keywords: dict[tuple[int, tuple[str, ...]], Any] = {}

    @functools.wraps(fun)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            call_kind = (len(args), tuple(kwargs))
            inner = with_keywords.get(call_kind)
            if inner is None:
                inner = with_keywords[call_kind] = _keywords_last(
                    fun, len(args), tuple(kwargs), axis_name, in_axes, out_axes, statics, devices, axis_size,
                    donated, where,
                )  # fmt: skip
            return inner(*args, kwargs)
        nargs = len(args)
        static_pos = {s + nargs if s < 0 else s for s in statics}
        for s in static_pos:
            if not 0 <= s < nargs:
                raise ValueError(f"{where}: static_broadcasted_argnums names argument {s}, but {nargs} were passed")
        dyn_pos = [i for i in range(nargs) if i not in static_pos]
        dyn = tuple(args[i] for i in dyn_pos)
        static_vals = tuple((i, args[i]) for i in sorted(static_pos))
        try:
            hash(static_vals)
        except TypeError:
            raise ValueError(f"{where}: static arguments must be hashable, got {static_vals!r}") from None
        axes_spec = in_axes
        if isinstance(axes_spec, list):
            axes_spec = tuple(axes_spec)
        if isinstance(axes_spec, tuple):
            if len(axes_spec) != nargs:
                raise ValueError(f"{where}: in_axes has {len(axes_spec)} entries but {nargs} arguments were passed")
            axes_spec = tuple(axes_spec[i] for i in dyn_pos)
        leaves, in_tree = tree_flatten(dyn)
        axes = _axes_per_leaf(axes_spec, dyn, "in_axes", where)
        size = _mapped_size(leaves, axes, where, axis_size)
        devs, local = _devices(size, chosen, where)
        if local is not None and not isinstance(current_trace(), EvalTrace):
            devs, local = local, None  # under a transformation: this process's devices only, as JAX's
        key = (static_vals, tuple(axes), tuple(map(id, devs)))
        entry = compiled.get(key)
        if entry is None:
            mesh = Mesh(np.array(devs, dtype=object), (name,))
            layouts = [NamedSharding(mesh, _spec_at(_normal(a, x), name)) for a, x in zip(axes, leaves)]
            in_shardings = tree_unflatten(in_tree, layouts)
            f = _build(fun, name, mesh, static_vals, dyn_pos, axes_spec, out_axes, nargs, donated, where, in_shardings)
            entry = compiled[key] = (f, mesh)
        f, mesh = entry
        if local is None:
            return f(*dyn)
        return _across_processes(f, mesh, local, dyn, leaves, axes, in_tree, dyn_pos, donated, where)

    return mapped


def _keywords_last(
    fun: Callable[..., Any], nargs: int, names: tuple[str, ...], axis_name: Hashable | None, in_axes: Any,
    out_axes: Any, statics: tuple[int, ...], devices: Sequence[Any] | None, axis_size: int | None,
    donated: tuple[int, ...], where: str,
) -> Any:  # fmt: skip
    """The ``pmap`` of ``fun`` for calls with ``nargs`` positional arguments and
    the keyword arguments ``names``: the keywords come last, as one dict
    mapped over axis 0 (JAX's rule for keyword arguments)."""
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != nargs:
            raise ValueError(f"{where}: in_axes has {len(in_axes)} entries but {nargs} arguments were passed")
        spec = (*in_axes, 0)
    else:
        spec = (*(in_axes,) * nargs, 0)

    @functools.wraps(fun)
    def call(*args: Any) -> Any:
        *positional, keywords = args
        return fun(*positional, **keywords)

    def positive(ks: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(k + nargs if k < 0 else k for k in ks)

    return pmap(call, axis_name, in_axes=spec, out_axes=out_axes, static_broadcasted_argnums=positive(statics),
                devices=devices, axis_size=axis_size, donate_argnums=positive(donated))  # fmt: skip


def _mapped_size(leaves: list[Any], axes: list[int | None], where: str, axis_size: int | None = None) -> int:
    size: int | None = None
    for k, (x, a) in enumerate(zip(leaves, axes)):
        if a is None:
            continue
        shape = get_aval(x, f"an argument of {where}").shape
        if not -len(shape) <= a < len(shape):
            raise ValueError(f"{where}: in_axes {a} is out of range for argument leaf {k} of shape {shape}")
        n = int(shape[a])
        if size is None:
            size = n
        elif n != size:
            raise ValueError(
                f"{where}: mapped axes must have one size, but argument leaves have sizes {size} and {n} "
                f"along their in_axes"
            )
    if size is None:
        raise ValueError(f"{where}: no argument is mapped (every in_axes is None); pmap needs a mapped argument")
    if axis_size is not None and axis_size != size:
        raise ValueError(
            f"{where}: the specified axis_size {axis_size} does not match the mapped arguments' size {size}"
        )
    return size


def _devices(size: int, chosen: list[Any] | None, where: str) -> tuple[list[Any], list[Any] | None]:
    """The devices of the mapping and, when they span several processes,
    this process's devices among them (else ``None``)."""
    me = _jaxlib.process_index()
    if chosen is not None:
        if not is_cross_process(chosen):
            if size != len(chosen):
                raise ValueError(
                    f"{where}: the mapped axis has size {size}, but devices= lists {len(chosen)} device(s); "
                    "they must be equal"
                )
            return chosen, None
        mine = [d for d in chosen if d.process_index == me]
        if size != len(mine):
            raise ValueError(
                f"{where}: devices= spans several processes, so each process passes one row per device of its "
                f"own: the mapped axis has size {size}, but devices= lists {len(mine)} device(s) of process {me}"
            )
        return chosen, mine
    every = _jaxlib.devices()
    local = [d for d in every if d.process_index == me]
    if len(local) < len(every):  # a run of several processes: map over every device of every process
        if size != len(local):
            raise ValueError(
                f"{where}: in a run of several processes pmap maps over the devices of every process, each "
                f"process passing one row per local device: the mapped axis must have size {len(local)} "
                f"(local_device_count()), got {size} (pass devices=local_devices() for a pmap within this process)"
            )
        return every, local
    if size > len(local):
        raise ValueError(
            f"{where}: the mapped axis has size {size}, but there are only {len(local)} device(s) "
            f"(set PLAIT_NUM_CPU_DEVICES for more CPU devices)"
        )
    return local[:size], None


def _across_processes(
    f: Any,
    mesh: Mesh,
    local: list[Any],
    dyn: tuple[Any, ...],
    leaves: list[Any],
    axes: list[int | None],
    in_tree: Any,
    dyn_pos: list[int],
    donated: tuple[int, ...],
    where: str,
) -> Any:
    """One call of the SPMD program over every process's devices: this
    process's rows in, its rows out (see :mod:`plait_dispatch.pmap_rows`)."""
    inputs = [to_global(x, _normal(a, x), mesh, local, where) for x, a in zip(leaves, axes)]
    outs = f(*tree_unflatten(in_tree, inputs))
    flat, out_tree = tree_flatten(outs)
    result = tree_unflatten(out_tree, [to_local(o, local, where) for o in flat])
    for k, p in enumerate(dyn_pos):  # the global copies were donated; so are the rows they came from
        if p in donated:
            for x in tree_flatten(dyn[k])[0]:
                if type(x) is Array:
                    x._donate()
    return result


def _build(
    fun: Callable[..., Any],
    name: Hashable,
    mesh: Mesh,
    static_vals: tuple[tuple[int, Any], ...],
    dyn_pos: list[int],
    axes_spec: Any,
    out_axes: Any,
    nargs: int,
    donated: tuple[int, ...],
    where: str,
    in_shardings: Any,
) -> Any:
    """``jit(shard_map(...))`` of ``fun`` for one layout of the arguments."""
    statics = dict(static_vals)

    def run(*dyn: Any) -> Any:
        leaves, in_tree = tree_flatten(dyn)
        axes = _axes_per_leaf(axes_spec, dyn, "in_axes", where)
        axes = [_normal(a, x) for a, x in zip(axes, leaves)]
        out_trees: list[Any] = []
        out_axes_leaves: list[list[int | None]] = []

        def body(*pieces: Any) -> list[Any]:
            xs = [p if a is None else squeeze(p, (a,)) for p, a in zip(pieces, axes)]
            it = iter(tree_unflatten(in_tree, xs))
            full = [statics[i] if i in statics else next(it) for i in range(nargs)]
            out = fun(*full)
            outs, out_tree = tree_flatten(out)
            oaxes = _axes_per_leaf(out_axes, out, "out_axes", where)
            oaxes = [None if a is None else a % (len(get_aval(o).shape) + 1) for o, a in zip(outs, oaxes)]
            out_trees.append(out_tree)
            out_axes_leaves.append(oaxes)
            return [o if a is None else expand_dims(o, (a,)) for o, a in zip(outs, oaxes)]

        body.__name__ = body.__qualname__ = f"pmap({fun_name(fun)})"

        # The output specs are known once the body is traced (out_axes is a
        # prefix of the output): shard_map asks for them after tracing.
        def specs(out_tree: Any) -> Any:
            return tree_unflatten(out_tree, [_spec_at(a, name) for a in out_axes_leaves[-1]])

        # pmap's semantics are JAX's unchecked ones (no varying-axes types, as JAX's pmap).
        mapped = shard_map(
            body, mesh=mesh, in_specs=tuple(_spec_at(a, name) for a in axes), out_specs=specs, check_vma=False
        )
        outs = mapped(*leaves)
        return tree_unflatten(out_trees[0], outs)

    positions = {p: k for k, p in enumerate(dyn_pos)}
    donate = tuple(positions[d] for d in donated if d in positions)
    return jit(run, donate_argnums=donate, in_shardings=in_shardings)


def _normal(axis: int | None, x: Any) -> int | None:
    """``axis`` counted from the front (``None`` stays ``None``)."""
    return None if axis is None else axis % len(get_aval(x).shape)

